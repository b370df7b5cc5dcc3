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
	Parent     *json.RawMessage                      `json:"parent"`
	Children   map[string]map[string]json.RawMessage `json:"children"`
	Related    map[string]map[string]json.RawMessage `json:"related"`
	Finalizing bool                                  `json:"finalizing"`
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
		return nil, badRequest("body is not valid JSON: %s", oneLine(err))
	}
	if w.Parent == nil {
		return nil, badRequest("no parent object")
	}
	var parent v1alpha1.Rds
	if err := json.Unmarshal(*w.Parent, &parent); err != nil {
		return nil, badRequest("parent is not an Rds object: %s", oneLine(err))
	}
	if parent.APIVersion != v1alpha1.APIVersion || parent.Kind != v1alpha1.Kind {
		return nil, badRequest("parent is %s %s, want %s %s", parent.APIVersion, parent.Kind, v1alpha1.APIVersion, v1alpha1.Kind)
	}
	if parent.Name == "" || parent.Namespace == "" {
		return nil, badRequest("parent has no name or namespace")
	}
	r := &Request{
		Parent:     parent,
		Finalizing: w.Finalizing,
		Version:    V1,
		Secrets:    map[string]*corev1.Secret{},
		Jobs:       map[string]*batchv1.Job{},
		Related:    map[string]*corev1.Secret{},
	}
	if w.Controller != nil {
		for _, h := range w.Controller.Spec.Hooks {
			if h.Version != "" {
				r.Version = h.Version
			}
		}
	}
	var err error
	if r.Secrets, err = decodeGroup[corev1.Secret](w.Children[SecretGroup], "child Secret"); err != nil {
		return nil, err
	}
	if r.Jobs, err = decodeGroup[batchv1.Job](w.Children[JobGroup], "child Job"); err != nil {
		return nil, err
	}
	if r.Related, err = decodeGroup[corev1.Secret](w.Related[SecretGroup], "related Secret"); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeGroup decodes one children or related map. Keys are "name" (v1) or "namespace/name" (v2);
// the objects carry their own name, which is what we key by.
func decodeGroup[T any, PT interface {
	*T
	GetName() string
}](m map[string]json.RawMessage, what string) (map[string]*T, error) {
	out := make(map[string]*T, len(m))
	for key, raw := range m {
		obj := PT(new(T))
		if err := json.Unmarshal(raw, obj); err != nil {
			return nil, badRequest("%s %q: %s", what, key, oneLine(err))
		}
		name := obj.GetName()
		if name == "" {
			name = key[strings.LastIndex(key, "/")+1:]
		}
		out[name] = (*T)(obj)
	}
	return out, nil
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

// DecodeCustomizeRequest parses a customize body.
func DecodeCustomizeRequest(body []byte) (*CustomizeRequest, error) {
	var w struct {
		Parent *json.RawMessage `json:"parent"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, badRequest("body is not valid JSON: %s", oneLine(err))
	}
	if w.Parent == nil {
		return nil, badRequest("no parent object")
	}
	var r CustomizeRequest
	if err := json.Unmarshal(*w.Parent, &r.Parent); err != nil {
		return nil, badRequest("parent is not an Rds object: %s", oneLine(err))
	}
	return &r, nil
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
