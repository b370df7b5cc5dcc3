package shape

// cCallee calls a.go through a function value, as a callback is.
func cCallee() int {
	f := aPlain
	return f()
}
