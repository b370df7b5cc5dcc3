package shape

// dCallee calls a generic function of a.go with two type parameters.
func dCallee() int { return aGeneric[int, string](1, "") }
