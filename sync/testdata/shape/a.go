// Package shape is a fixture of TestTheShapeSeesEveryWay: each of b.go, c.go and d.go calls a.go
// back in a way the shape test must count, and cloud.go takes and holds a cloud client in ways it
// must see.
package shape

func aPlain() int { return 1 }

func aGeneric[A, B any](A, B) int { return 1 }

func aCalls() int { return bCallee() + cCallee() + dCallee() }
