// Package hook holds our copies of Metacontroller's CompositeController hook wire types (its Go
// module is named "metacontroller" and cannot be imported). They are checked against requests that a
// real Metacontroller v4.17.2 sent (test/testdata/metacontroller).
package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// Keys of the children and related maps, one per declared child type.
const (
	SecretGroup = "Secret.v1"
	JobGroup    = "Job.batch/v1"
)

// Hook versions. v1 keys children by name, v2 by namespace/name and decodes responses strictly.
const (
	V1 = "v1"
	V2 = "v2"
)

// Request is the body of a sync or finalize call.
type Request struct {
	Parent     v1alpha1.Rds
	Secrets    map[string]*corev1.Secret // observed child Secrets, keyed by name
	Jobs       map[string]*batchv1.Job   // observed child Jobs, keyed by name
	Related    map[string]*corev1.Secret // related Secrets from the customize hook, keyed by name
	Finalizing bool
	// Version is the hook version the controller was configured with.
	Version string
}

type wireRequest struct {
	Controller *struct {
		Spec struct {
			Hooks map[string]struct {
				Version string `json:"version"`
			} `json:"hooks"`
		} `json:"spec"`
	} `json:"controller"`
	Parent     *json.RawMessage `json:"parent"`
	Children   wireGroups       `json:"children"`
	Related    wireGroups       `json:"related"`
	Finalizing bool             `json:"finalizing"`
}

// wireGroups are the children or related objects by type, decoded in the one pass over the body.
//
// NOTE: the children can make up nearly all of a large body; keeping them as raw JSON to decode
// later would hold a second copy of it per call in flight.
type wireGroups struct {
	Secrets map[string]*corev1.Secret `json:"Secret.v1"`
	Jobs    map[string]*batchv1.Job   `json:"Job.batch/v1"`
}

// ErrBadRequest marks a body that is not a hook request for an Rds parent.
var ErrBadRequest = errors.New("bad hook request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, args...)...)
}

// DecodeRequest parses a sync or finalize body. Errors wrap ErrBadRequest and are one line.
func DecodeRequest(body []byte) (*Request, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, badRequest("body is not a hook request: %s", oneLine(err))
	}
	parent, err := decodeParent(w.Parent)
	if err != nil {
		return nil, err
	}
	r := &Request{
		Parent:     parent,
		Finalizing: w.Finalizing,
		Version:    V1,
		Secrets:    byName(w.Children.Secrets),
		Jobs:       byName(w.Children.Jobs),
		Related:    byName(w.Related.Secrets),
	}
	if w.Controller != nil {
		for _, h := range w.Controller.Spec.Hooks {
			if h.Version != "" {
				r.Version = h.Version
			}
		}
	}
	return r, nil
}

// decodeParent decodes and checks the parent of any hook call: an Rds object with a name and a
// namespace, whose fields have the right types.
func decodeParent(raw *json.RawMessage) (v1alpha1.Rds, error) {
	var parent v1alpha1.Rds
	if raw == nil {
		return parent, badRequest("no parent object")
	}
	if err := json.Unmarshal(*raw, &parent); err != nil {
		return parent, badRequest("parent is not an Rds object: %s", oneLine(err))
	}
	if parent.APIVersion != v1alpha1.APIVersion || parent.Kind != v1alpha1.Kind {
		return parent, badRequest("parent is %s %s, want %s %s", parent.APIVersion, parent.Kind, v1alpha1.APIVersion, v1alpha1.Kind)
	}
	if parent.Name == "" || parent.Namespace == "" {
		return parent, badRequest("parent has no name or namespace")
	}
	return parent, nil
}

// byName keys one children or related map by the objects' names. Keys are "name" (v1) or
// "namespace/name" (v2); the objects carry their own name, which is what we key by.
func byName[T any, PT interface {
	*T
	GetName() string
}](m map[string]PT) map[string]*T {
	out := make(map[string]*T, len(m))
	for key, obj := range m {
		if obj == nil { // "name": null
			obj = PT(new(T))
		}
		name := obj.GetName()
		if name == "" {
			name = key[strings.LastIndex(key, "/")+1:]
		}
		out[name] = (*T)(obj)
	}
	return out
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// SyncResponse is the answer to a sync call. With hook version v2 Metacontroller rejects unknown
// keys, so only these are ever sent.
type SyncResponse struct {
	Status             *v1alpha1.RdsStatus `json:"status"`
	Children           []any               `json:"children"`
	ResyncAfterSeconds float64             `json:"resyncAfterSeconds,omitempty"`
}

// FinalizeResponse is the answer to a finalize call.
type FinalizeResponse struct {
	Status             *v1alpha1.RdsStatus `json:"status"`
	Children           []any               `json:"children"`
	ResyncAfterSeconds float64             `json:"resyncAfterSeconds,omitempty"`
	Finalized          bool                `json:"finalized"`
}

// CustomizeRequest is the body of a customize call.
type CustomizeRequest struct {
	Parent v1alpha1.Rds `json:"parent"`
}

// DecodeCustomizeRequest parses a customize body, checking its parent as DecodeRequest does.
func DecodeCustomizeRequest(body []byte) (*CustomizeRequest, error) {
	var w struct {
		Parent *json.RawMessage `json:"parent"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, badRequest("body is not valid JSON: %s", oneLine(err))
	}
	parent, err := decodeParent(w.Parent)
	if err != nil {
		return nil, err
	}
	return &CustomizeRequest{Parent: parent}, nil
}

// CustomizeResponse names the related objects the sync and finalize calls need.
type CustomizeResponse struct {
	RelatedResources []ResourceRule `json:"relatedResources"`
}

// ResourceRule selects related objects by name in one namespace.
type ResourceRule struct {
	APIVersion string   `json:"apiVersion"`
	Resource   string   `json:"resource"`
	Namespace  string   `json:"namespace,omitempty"`
	Names      []string `json:"names,omitempty"`
}
