package metacontroller

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

// captured is the body of each captured request by hook version and call, read once: the
// envelope (controller and all) every request is built from.
var captured = sync.OnceValues(func() (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	for key, name := range map[string]string{
		hook.V1 + "/sync":     "01-sync-v1-no-children.request.json",
		hook.V1 + "/finalize": "05-finalize-v1-first-call-hold.request.json",
		hook.V2 + "/sync":     "07-sync-v2-with-secret-child.request.json",
		hook.V2 + "/finalize": "08-finalize-v2-release.request.json",
	} {
		body, err := os.ReadFile(filepath.Join(testdata.Dir(), "metacontroller", name))
		if err != nil {
			return nil, err
		}
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[key] = req
	}
	return out, nil
})

// Body is the next request as Metacontroller sends it: the captured envelope of the hook version,
// the stored parent, the observed children and the related Secrets, and finalizing.
func (o *Object) Body() ([]byte, error) {
	all, err := captured()
	if err != nil {
		return nil, err
	}
	envelope, ok := all[o.Version+o.Path()]
	if !ok {
		return nil, fmt.Errorf("no captured request for hook version %q", o.Version)
	}
	req := maps.Clone(envelope)
	req["parent"] = o.Parent
	o.sentGeneration = o.Generation()
	req["children"] = map[string]any{hook.SecretGroup: keyed(o, o.Secrets), hook.JobGroup: keyed(o, o.Jobs)}
	req["related"] = map[string]any{}
	if len(o.Related) > 0 {
		req["related"] = map[string]any{hook.SecretGroup: keyed(o, o.Related)}
	}
	req["finalizing"] = o.Deleting()
	return json.Marshal(req)
}

// Request is Body decoded as the server decodes it, times in UTC: what an in-process hook is
// given.
func (o *Object) Request() (*hook.Request, error) {
	body, err := o.Body()
	if err != nil {
		return nil, err
	}
	req, err := hook.DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	inUTC(req)
	return req, nil
}

// keyed keys objects as the hook version does: by name (v1) or namespace/name (v2).
func keyed[T interface{ GetNamespace() string }](o *Object, objs map[string]T) map[string]T {
	out := make(map[string]T, len(objs))
	for name, obj := range objs {
		key := name
		if o.Version == hook.V2 {
			ns := obj.GetNamespace()
			if ns == "" {
				ns, _ = o.Meta()["namespace"].(string)
			}
			key = ns + "/" + name
		}
		out[key] = obj
	}
	return out
}
