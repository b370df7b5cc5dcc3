package view

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// packed is an instance as the view keeps it: all its strings in one string, and everything else
// (the strings' ends, numbers, lengths) in one slice of integers.
//
// NOTE: the view holds every instance of the project for as long as the process runs. As a
// cloud.Instance that is about forty objects per instance, full of pointers, which the garbage
// collector scans again in every cycle; a steady sync allocates some 30 KB, so at 10,000
// instances a cycle comes every few hundred syncs and scans some 400,000 objects. Packed, an
// instance is two objects without pointers inside, which a cycle marks without scanning (#18:
// docs/benchmarks.md). Unpacking costs what a copy of the instance did: its strings are slices of
// the packed one, and only its slices and map are made.
type packed struct {
	text string
	nums []int64
}

// pack packs an instance. unpack(pack(in)) equals *in, but for Created, which is kept as an
// instant (in UTC, as the OTC adapter reads it, and without a monotonic reading).
//
// NOTE: every field of cloud.Instance is written here and read back in unpack in the same order;
// TestPackKeepsEveryField fills each field by reflection and fails on one either forgets.
func pack(in *cloud.Instance) packed {
	var p packer
	p.str(in.ID, in.Name, in.Status, in.Type, in.Engine, in.Version, in.CompleteVersion, in.Flavor,
		in.Volume.Type, in.Region, in.VpcID, in.SubnetID, in.SecurityGroupID, in.ReplicationMode,
		in.BackupStrategy.StartTime, in.BackupStrategy.Period, in.TimeZone, in.DiskEncryptionID,
		in.MaintenanceWindow, in.ReplicaOf)
	p.num(int64(in.Volume.Size), int64(in.Port), int64(in.BackupStrategy.KeepDays))
	switch {
	case in.SSL == nil:
		p.num(0)
	case *in.SSL:
		p.num(2)
	default:
		p.num(1)
	}
	// NOTE: seconds and nanoseconds apart, not UnixNano, which holds only 1678 to 2262 and wraps
	// outside: two instants would pack equal, and unpack as a third.
	if in.Created.IsZero() {
		p.num(0, 0, 0)
	} else {
		p.num(1, in.Created.Unix(), int64(in.Created.Nanosecond()))
	}
	p.strs(in.PrivateIPs)
	p.strs(in.Replicas)
	p.length(in.Nodes == nil, len(in.Nodes))
	for _, n := range in.Nodes {
		p.str(n.ID, n.Name, n.Role, n.Status, n.AvailabilityZone)
	}
	p.length(in.Tags == nil, len(in.Tags))
	for _, k := range slices.Sorted(maps.Keys(in.Tags)) {
		p.str(k, in.Tags[k])
	}
	// The view keeps it as long as the instance lives: copies of the exact size, not the buffers
	// grown by doubling (about a fifth more).
	return packed{text: strings.Clone(p.text.String()), nums: slices.Clone(p.nums)}
}

// unpack makes the instance p packs.
func (p packed) unpack() *cloud.Instance {
	u := unpacker{p: p}
	in := &cloud.Instance{}
	u.str(&in.ID, &in.Name, &in.Status, &in.Type, &in.Engine, &in.Version, &in.CompleteVersion, &in.Flavor,
		&in.Volume.Type, &in.Region, &in.VpcID, &in.SubnetID, &in.SecurityGroupID, &in.ReplicationMode,
		&in.BackupStrategy.StartTime, &in.BackupStrategy.Period, &in.TimeZone, &in.DiskEncryptionID,
		&in.MaintenanceWindow, &in.ReplicaOf)
	in.Volume.Size, in.Port, in.BackupStrategy.KeepDays = int(u.num()), int(u.num()), int(u.num())
	if ssl := u.num(); ssl != 0 {
		on := ssl == 2
		in.SSL = &on
	}
	if set, sec, nsec := u.num(), u.num(), u.num(); set != 0 {
		in.Created = time.Unix(sec, nsec).UTC()
	}
	in.PrivateIPs = u.strs()
	in.Replicas = u.strs()
	if n, ok := u.length(); ok {
		in.Nodes = make([]cloud.Node, n)
		for i := range in.Nodes {
			nd := &in.Nodes[i]
			u.str(&nd.ID, &nd.Name, &nd.Role, &nd.Status, &nd.AvailabilityZone)
		}
	}
	if n, ok := u.length(); ok {
		in.Tags = make(map[string]string, n)
		for range n {
			var k, v string
			u.str(&k, &v)
			in.Tags[k] = v
		}
	}
	return in
}

// equal says whether p and q pack the same instance.
func (p packed) equal(q packed) bool {
	return p.text == q.text && slices.Equal(p.nums, q.nums)
}

type packer struct {
	text strings.Builder
	nums []int64
}

// str writes strings, each ended by its end in the text.
func (p *packer) str(ss ...string) {
	for _, s := range ss {
		p.text.WriteString(s)
		p.nums = append(p.nums, int64(p.text.Len()))
	}
}

func (p *packer) num(ns ...int64) { p.nums = append(p.nums, ns...) }

// length writes a slice's or map's length, keeping nil apart from empty.
func (p *packer) length(isNil bool, n int) {
	if isNil {
		p.num(-1)
		return
	}
	p.num(int64(n))
}

func (p *packer) strs(ss []string) {
	p.length(ss == nil, len(ss))
	p.str(ss...)
}

type unpacker struct {
	p       packed
	at, end int // the next number, the end of the last string
}

func (u *unpacker) num() int64 {
	n := u.p.nums[u.at]
	u.at++
	return n
}

func (u *unpacker) str(into ...*string) {
	for _, s := range into {
		end := int(u.num())
		*s = u.p.text[u.end:end]
		u.end = end
	}
}

func (u *unpacker) length() (int, bool) {
	n := u.num()
	return int(n), n >= 0
}

func (u *unpacker) strs() []string {
	n, ok := u.length()
	if !ok {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		u.str(&out[i])
	}
	return out
}
