package metacontroller

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// updateMethod is a child type's updateStrategy.method.
type updateMethod int

const (
	inPlace  updateMethod = iota // update the observed child to the merged object
	recreate                     // delete the observed child now; a later answer creates it again
)

// Decode reads a 200 answer strictly, as Metacontroller reads hook version v2 answers: an unknown
// key, here or in the status, is an error.
func Decode(body []byte) (*Answer, error) {
	var a Answer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%w: the answer does not decode: %v", ErrHook, err)
	}
	inUTC(&a)
	return &a, nil
}

// Apply makes an answer the cluster's state, as Metacontroller does after a 200: the children
// are created, updated, recreated or deleted, the status is replaced whole with observedGeneration
// added, and a finalize answer with finalized: true releases the object. An answer with a child of
// a type the CompositeController does not declare is an error and changes nothing.
func (o *Object) Apply(a *Answer) error {
	desired := map[string]map[string]map[string]any{hook.SecretGroup: {}, hook.JobGroup: {}}
	ns, _ := o.Meta()["namespace"].(string)
	for _, raw := range a.Children {
		var ref childRef
		if err := json.Unmarshal(raw, &ref); err != nil {
			return fmt.Errorf("%w: a child is not an object: %v", ErrHook, err)
		}
		group, ok := desired[ref.group()]
		switch {
		case !ok:
			return fmt.Errorf("%w: a child of type %s, which the CompositeController does not declare", ErrHook, ref.group())
		case ref.Metadata.Name == "":
			return fmt.Errorf("%w: a %s child without a name", ErrHook, ref.Kind)
		case ref.Metadata.Namespace != "" && ref.Metadata.Namespace != ns:
			return fmt.Errorf("%w: child %s %s in namespace %s, not the parent's", ErrHook, ref.Kind, ref.Metadata.Name, ref.Metadata.Namespace)
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%w: child %s %s: %v", ErrHook, ref.Kind, ref.Metadata.Name, err)
		}
		group[ref.Metadata.Name] = obj
	}

	o.changes = Changes{}
	o.Secrets = applyChildren(o, "Secret", o.Secrets, desired[hook.SecretGroup], inPlace)
	o.Jobs = applyChildren(o, "Job", o.Jobs, desired[hook.JobGroup], recreate)

	status := mustJSONMap(a.Status)
	gen := o.sentGeneration
	if gen == 0 {
		gen = o.Generation()
	}
	status["observedGeneration"] = gen // the generation the hook was shown, as Metacontroller writes it
	o.Parent["status"] = status

	if a.Finalized && o.Deleting() {
		finalizers, _ := o.Meta()["finalizers"].([]any)
		o.Meta()["finalizers"] = slices.DeleteFunc(slices.Clone(finalizers), func(f any) bool { return f == Finalizer })
		o.gone = true
	}
	return nil
}

// applyChildren is Metacontroller's ManageChildren for one child type: it returns what the
// informer shows afterwards.
func applyChildren[T any](o *Object, kind string, observed map[string]*T, desired map[string]map[string]any, method updateMethod) map[string]*T {
	out := make(map[string]*T, len(desired))
	for name, want := range desired {
		ref := kind + "/" + name
		old, ok := observed[name]
		if !ok {
			out[name] = decodeChild[T](o.created(want))
			o.changes.Created = append(o.changes.Created, ref)
			continue
		}
		oldObj := mustJSONMap(old)
		merged := threeWayMerge(oldObj, lastApplied(oldObj), want)
		if reflect.DeepEqual(merged, oldObj) {
			out[name] = old
			continue
		}
		if method == inPlace {
			out[name] = decodeChild[T](merged)
			o.changes.Updated = append(o.changes.Updated, ref)
			continue
		}
		// NOTE: Recreate deletes the child now and creates it only on a later sync, when the
		// informer no longer shows it; the next request has no such child.
		o.changes.Recreated = append(o.changes.Recreated, ref)
	}
	for name := range observed {
		if _, ok := desired[name]; !ok { // left out of the answer: deleted
			o.changes.Deleted = append(o.changes.Deleted, kind+"/"+name)
		}
	}
	for _, refs := range [][]string{o.changes.Created, o.changes.Updated, o.changes.Recreated, o.changes.Deleted} {
		slices.Sort(refs)
	}
	return out
}

// Changes are what the last Apply did to the children, as "Kind/name", sorted.
type Changes struct {
	Created, Updated, Recreated, Deleted []string
}

// Changes reports what the last Apply did to the children.
func (o *Object) Changes() Changes { return o.changes }

// created is a new child as the API server stores it: the hook's object with the last-applied
// annotation, the controller reference and the controller-uid label.
func (o *Object) created(want map[string]any) map[string]any {
	obj := clone(want)
	md := child(obj, "metadata")
	if md["namespace"] == nil || md["namespace"] == "" {
		md["namespace"] = o.Meta()["namespace"]
	}
	setLastApplied(obj, want)
	labels := child(md, "labels")
	labels[LabelControllerUID] = o.Meta()["uid"]
	refs, _ := md["ownerReferences"].([]any)
	md["ownerReferences"] = append(refs, map[string]any{
		"apiVersion": o.Parent["apiVersion"], "kind": o.Parent["kind"],
		"name": o.Meta()["name"], "uid": o.Meta()["uid"],
		"controller": true, "blockOwnerDeletion": true,
	})
	return obj
}

// systemFields are the read-only metadata fields the merge never changes.
var systemFields = []string{"selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds"}

// threeWayMerge computes the child to store from the observed child, the last answer's child and
// this answer's, in the style of kubectl apply: fields the answer sets win, fields the last answer
// set and this one does not are removed, everything else (what the cluster added) stays. Status and
// the system metadata fields are the observed ones.
//
// NOTE: lists are replaced whole; Metacontroller merges lists of named items, but the hooks' lists
// have nothing in them that the cluster adds.
func threeWayMerge(observed, last, desired map[string]any) map[string]any {
	out := mergeMaps(observed, last, desired)
	md, omd := child(out, "metadata"), child(clone(observed), "metadata")
	for _, f := range systemFields {
		if v, ok := omd[f]; ok {
			md[f] = v
		} else {
			delete(md, f)
		}
	}
	if st, ok := observed["status"]; ok {
		out["status"] = cloneValue(st)
	} else {
		delete(out, "status")
	}
	setLastApplied(out, desired)
	return out
}

func mergeMaps(observed, last, desired map[string]any) map[string]any {
	out := clone(observed)
	for k, want := range desired {
		om, isMap := out[k].(map[string]any)
		wm, wantMap := want.(map[string]any)
		if isMap && wantMap {
			lm, _ := last[k].(map[string]any)
			out[k] = mergeMaps(om, lm, wm)
			continue
		}
		out[k] = cloneValue(want)
	}
	for k := range last {
		if _, ok := desired[k]; !ok {
			delete(out, k)
		}
	}
	return out
}

func lastApplied(obj map[string]any) map[string]any {
	ann, _ := child(clone(obj), "metadata")["annotations"].(map[string]any)
	raw, _ := ann[AnnotationLastApplied].(string)
	var last map[string]any
	if raw != "" {
		_ = json.Unmarshal([]byte(raw), &last)
	}
	return last
}

func setLastApplied(obj, applied map[string]any) {
	raw, err := json.Marshal(applied)
	if err != nil {
		panic(fmt.Sprintf("metacontroller: %v", err))
	}
	child(child(obj, "metadata"), "annotations")[AnnotationLastApplied] = string(raw)
}

func decodeChild[T any](obj map[string]any) *T {
	out := new(T)
	mustRoundTrip(obj, out)
	return out
}
