package reconcile

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Ownership tags. An instance the controller creates carries them from its first change on (the
// SDK's create request has no tags: they are written right after the create, before anything else
// happens to the instance). They prove which Rds object an instance belongs to; the name never does.
const (
	TagOwnerCluster   = "rds-owner-cluster"
	TagOwnerNamespace = "rds-owner-namespace"
	TagOwnerName      = "rds-owner-name"
	TagOwnerUID       = "rds-owner-uid"
	// TagReleasedBy names the uid of the object that let the instance go under deletionpolicy
	// Retain: no later object takes it over by name, only by explicit adoption.
	TagReleasedBy = "rds-released-by"
)

// reservedTagPrefixes are the tag keys spec.tags may not name: the managed-tags logic never sets
// or removes them. Besides the ownership tags, the marks of one-shot requests (oneshot.go).
var reservedTagPrefixes = []string{"rds-owner-", "rds-released", TagRestartRequest, TagUpgradeRequest, TagReplica}

// reservedTag reports whether key is one of the controller's tags' keys, in any case.
//
// NOTE: OTC does not document whether tag keys are case-sensitive; were they not, spec.tags key
// RDS-OWNER-UID would overwrite (or its removal delete) an ownership tag. Any case is reserved.
func reservedTag(key string) bool {
	key = strings.ToLower(key)
	for _, p := range reservedTagPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// ClusterIDPattern is the form of --cluster-id: 1 to 32 lowercase letters, digits and '-'.
var ClusterIDPattern = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// AdoptionPolicy says which instances spec.instanceid may adopt (--adoption).
type AdoptionPolicy string

// Adoption policies.
const (
	// AdoptUnowned adopts an instance without ownership tags, or one released by an Rds object
	// of the same namespace and cluster. The default.
	AdoptUnowned AdoptionPolicy = "Unowned"
	// AdoptSameNamespace adopts only an instance released by an Rds object of the same namespace
	// and cluster.
	AdoptSameNamespace AdoptionPolicy = "SameNamespace"
	// AdoptNever adopts nothing.
	AdoptNever AdoptionPolicy = "Never"
)

// AdoptionPolicies are the valid values of --adoption.
var AdoptionPolicies = []AdoptionPolicy{AdoptUnowned, AdoptSameNamespace, AdoptNever}

// owner is one Rds object as its instance's tags name it.
type owner struct {
	Cluster, Namespace, Name, UID string
	// Created is when the object was created (its metadata.creationTimestamp); zero if unknown.
	// It is no tag: it only tells which untagged instances the object cannot have created.
	Created time.Time
}

// createdSlack allows for the clocks of OTC and the Kubernetes API server disagreeing.
const createdSlack = 5 * time.Minute

// predates reports whether inst was created before this object was: the object cannot have
// created it, whatever its name.
//
// NOTE: an untagged instance is taken over by its name alone only as the object's own create
// whose tags are not written yet, or as an instance the version before tags created for it. Both
// were created after the object. One that is older was created for someone else who computes the
// same name: an object deleted under deletionpolicy Retain before there were release tags and
// created again, or the same namespace/name in another cluster sharing the OTC project (the legacy
// name has no cluster id in it). OTC shows no creation time while it builds an instance: that one
// is new.
func (o owner) predates(inst *cloud.Instance) bool {
	return !o.Created.IsZero() && !inst.Created.IsZero() && inst.Created.Before(o.Created.Add(-createdSlack))
}

// tags are the ownership tags of an instance owned by o, values encoded.
func (o owner) tags() map[string]string {
	return map[string]string{
		TagOwnerCluster:   tagValue(o.Cluster),
		TagOwnerNamespace: tagValue(o.Namespace),
		TagOwnerName:      tagValue(o.Name),
		TagOwnerUID:       tagValue(o.UID),
	}
}

// releaseTags are the tags that release the instance owned by o.
func (o owner) releaseTags() map[string]string {
	t := o.tags()
	t[TagReleasedBy] = tagValue(o.UID)
	return t
}

// maxTagValue is OTC's longest tag value.
const maxTagValue = 43

// tagValue encodes s as an OTC tag value (up to 43 of [A-Za-z0-9_.-]): s itself if it fits, else a
// cut prefix, "-" and 8 hex digits of sha256(s). Tag values are always compared encoded.
func tagValue(s string) string {
	if tagValuePattern.MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLen]
	prefix := sanitizeTag(s)
	if room := maxTagValue - len(suffix); len(prefix) > room {
		prefix = prefix[:room]
	}
	return prefix + suffix
}

func sanitizeTag(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Ownership is how an observed instance relates to one Rds object.
type Ownership int

// Ownerships, see classify.
const (
	// Unowned: no ownership tags, and a name that is not this object's (or created before it).
	Unowned Ownership = iota
	// Ours: its tags name this object (uid) in this cluster, and it is not released.
	Ours
	// OursUntagged: no ownership tags, this object's name (new or legacy), and not created before
	// the object: this object's own create whose tags are not written yet, or an instance created
	// for it before there were tags.
	OursUntagged
	// Released: an object let it go under deletionpolicy Retain.
	Released
	// OwnedByOther: its tags name another object or another cluster.
	OwnedByOther
)

func (o Ownership) String() string {
	switch o {
	case Ours:
		return "Ours"
	case OursUntagged:
		return "OursUntagged"
	case Released:
		return "Released"
	case OwnedByOther:
		return "OwnedByOther"
	}
	return "Unowned"
}

// claim is what an instance's tags say of its owner, judged for one object.
type claim struct {
	Kind Ownership
	// Namespace and Cluster are the owner tags' values (encoded), "" when absent.
	Namespace, Cluster string
	// ReleasedBy is the uid that released the instance.
	ReleasedBy string
	// StaleRelease: the instance is Ours but still carries the release tag of an earlier owner
	// (adopted after a release): the tag is removed as a change of its own.
	StaleRelease bool
}

// sameTenant reports whether the owner tags name me's namespace in me's cluster.
func (cl claim) sameTenant(me owner) bool {
	return cl.Cluster == tagValue(me.Cluster) && cl.Namespace == tagValue(me.Namespace)
}

// classify judges an observed instance against the object me, whose instance names are names.
//
// NOTE: released means the release tag names the owner the uid tag names (or there is no uid tag).
// OTC's tag API sets and deletes in separate requests; an adoption writes our owner tags first,
// which makes an earlier owner's release tag stale at once, and removes it in a later call.
func classify(inst *cloud.Instance, me owner, names ...string) claim {
	t := inst.Tags
	cl := claim{Namespace: t[TagOwnerNamespace], Cluster: t[TagOwnerCluster], ReleasedBy: t[TagReleasedBy]}
	uid, hasUID := t[TagOwnerUID]
	tagged := hasUID || cl.ReleasedBy != ""
	for k := range t {
		tagged = tagged || reservedTag(k)
	}
	switch {
	case !tagged && slices.Contains(names, inst.Name) && !me.predates(inst):
		cl.Kind = OursUntagged
	case !tagged:
		cl.Kind = Unowned
	case cl.ReleasedBy != "" && (!hasUID || uid == cl.ReleasedBy):
		cl.Kind = Released
	case hasUID && uid == tagValue(me.UID) && cl.Cluster == tagValue(me.Cluster):
		cl.Kind = Ours
		cl.StaleRelease = cl.ReleasedBy != ""
	default:
		cl.Kind = OwnedByOther
	}
	return cl
}

// mine reports whether the instance is this object's to manage, change and delete.
func (cl claim) mine() bool { return cl.Kind == Ours || cl.Kind == OursUntagged }

// adoptionRefusal says why policy refuses to let me adopt an instance of this claim; "" allows it.
func adoptionRefusal(policy AdoptionPolicy, cl claim, me owner) string {
	if cl.Kind == Ours {
		return "" // this object adopted it already (a lost answer)
	}
	if policy == AdoptNever {
		return "the controller's adoption policy is Never."
	}
	switch cl.Kind {
	case Released:
		if cl.sameTenant(me) {
			return ""
		}
		return "it was released by an Rds object of another namespace or cluster."
	case OwnedByOther:
		return "it belongs to another Rds object."
	}
	// No ownership tags at all.
	if policy == AdoptSameNamespace {
		return "it carries no ownership tags, and the controller's adoption policy is SameNamespace: only an instance released by an Rds object of this namespace is adopted."
	}
	return ""
}

// restoreSourceRefusal says why spec.restorefrom may not name the instance whose ownership is cl;
// "" allows it. The namespace's own credentials reach only what its own OTC project holds, so
// with them any source is allowed; with the controller's, only an instance owned (or released)
// by an Rds object of this namespace and cluster.
func restoreSourceRefusal(cl claim, me owner, ownProject bool) string {
	if ownProject || (cl.Kind != Unowned && cl.Kind != OursUntagged && cl.sameTenant(me)) {
		return ""
	}
	return "no instance of an Rds object of this namespace has that id or name, and only such an instance can be restored from with the controller's credentials."
}

// pickInstance chooses, among instances that are all this object's, the one to manage: the one
// status names, else the oldest (OTC shows no creation time while it builds: newest), else the
// smallest id. The others are reported, never deleted.
func pickInstance(mine []*cloud.Instance, statusID string) (keep *cloud.Instance, others []string) {
	if len(mine) == 0 {
		return nil, nil
	}
	sorted := slices.Clone(mine)
	slices.SortFunc(sorted, func(a, b *cloud.Instance) int {
		switch {
		case a.ID == statusID && b.ID != statusID:
			return -1
		case b.ID == statusID && a.ID != statusID:
			return 1
		case a.Created.IsZero() != b.Created.IsZero():
			if a.Created.IsZero() {
				return 1
			}
			return -1
		}
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	for _, in := range sorted[1:] {
		if in.ID != sorted[0].ID && !slices.Contains(others, in.ID) {
			others = append(others, in.ID)
		}
	}
	slices.Sort(others)
	return sorted[0], others
}

// nameTakenMessage is the sentence of an object whose instance name only an instance that is not
// its own carries (cl), with advice that leads somewhere: policy lets me adopt it or not.
//
// NOTE: whoever can send a request for an object can compute its instance name, so the sentence
// names no instance that is not the object's: not its id, nor its owner. The one exception is an
// instance an Rds object of this very namespace released (deletionpolicy Retain) and the policy
// lets this object adopt: it is the namespace's own, and adopting it needs its id.
func nameTakenMessage(id string, cl claim, policy AdoptionPolicy, me owner) string {
	allowed := adoptionRefusal(policy, cl, me) == ""
	switch {
	case cl.Kind == Released && cl.sameTenant(me) && allowed:
		return fmt.Sprintf("The instance name of this object is taken by the OTC instance %s, which an Rds object of this namespace released (deletionpolicy Retain), so no instance is created. "+
			"To take it over, adopt it: set instanceid %s and its root password (password or passwordsecretref). To start afresh instead, choose another name for this object.", id, id)
	case cl.Kind == Unowned && allowed:
		return "The instance name of this object is taken by an OTC instance without ownership tags, so no instance is created. " +
			"If it is this namespace's (an instance retained before the controller wrote ownership tags), adopt it: set instanceid to its id as OTC shows it, and its root password. Else choose another name for this object."
	}
	return "The instance name of this object is taken by an OTC instance that is not this object's, so no instance is created. Choose another name for this object."
}
