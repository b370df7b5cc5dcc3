package otcsim

import "fmt"

// SetInstanceName renames an instance behind the API's back, without the API's checks (no job, no
// counted call, no uniqueness check). It lets tests build what OTC allows and the strict
// simulator's create refuses: several instances sharing one name, as a create race between two
// controller replicas leaves them.
func (s *Sim) SetInstanceName(id, name string) error {
	now := s.lockAt()
	defer s.mu.Unlock()
	in := s.instances[id]
	if in == nil {
		return fmt.Errorf("instance %s does not exist", id)
	}
	in.name = name
	in.updated = now
	return nil
}
