package reconcile

import (
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Customize names the Secrets the sync and finalize calls read besides their children: the one in
// passwordsecretref. Metacontroller then watches them and passes them in "related".
func Customize(req *hook.CustomizeRequest) *hook.CustomizeResponse {
	resp := &hook.CustomizeResponse{RelatedResources: []hook.ResourceRule{}}
	if ref := req.Parent.Spec.Passwordsecretref; ref != nil && ref.Name != "" {
		resp.RelatedResources = append(resp.RelatedResources, hook.ResourceRule{
			APIVersion: "v1",
			Resource:   "secrets",
			Namespace:  req.Parent.Namespace,
			Names:      []string{ref.Name},
		})
	}
	resp.RelatedResources = append(resp.RelatedResources, userSecretRules(req)...) // databases.go
	return resp
}
