package shape

import "github.com/mcsps/rds-lambda-controller/sync/cloud"

// variadic takes clients as a variadic parameter.
func variadic(...cloud.Cloud) {}

// literal takes one in a function literal.
var literal = func(cloud.InstanceObserver) {}

// holder holds one, as a step must not.
type holder struct {
	client cloud.Cloud
}
