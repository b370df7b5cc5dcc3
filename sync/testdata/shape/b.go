package shape

// bValue calls a.go from a package-level initializer, outside any function.
var bValue = aPlain()

func bCallee() int { return bValue }
