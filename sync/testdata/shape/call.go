package shape

// call has one method of its own and one promoted from the type it embeds.
type call struct {
	embedded
}

func (c *call) own() {}

type embedded struct{}

func (embedded) promoted() {}
