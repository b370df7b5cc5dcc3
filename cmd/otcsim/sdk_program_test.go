package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/vpcs"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/layer3/routers"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/security/groups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/networks"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/subnets"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/flavors"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	vpcsv3 "github.com/opentelekomcloud/gophertelekomcloud/openstack/vpc/v3/vpcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// startOtcsim runs the command as `go run ./cmd/otcsim ARGS` would and returns the variables it
// prints. The command stops when the test ends.
func startOtcsim(t *testing.T, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout testutil.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...), &stdout, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("otcsim did not stop")
		}
	})

	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "export OS_AUTH_URL=") },
		10*time.Second, 10*time.Millisecond)
	exports := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		if kv, ok := strings.CutPrefix(sc.Text(), "export "); ok {
			k, v, _ := strings.Cut(kv, "=")
			uq, err := strconv.Unquote(v)
			require.NoError(t, err, "an export line is shell-quoted: %s", sc.Text())
			exports[k] = uq
		}
	}
	return exports
}

// exportOnly makes exports the only OS_* (and AWS_*) variables of the test's environment.
func exportOnly(t *testing.T, exports map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OS_") || strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "") // the SDK takes the first non-empty variable
		}
	}
	for k, v := range exports {
		t.Setenv(k, v)
	}
}

// mysqlEndpoint is a MySQL-compatible server to back the instance with: the test MariaDB of
// test/run.sh when TEST_MYSQL_ADDR is set, otherwise a listener that only sends the first packet of
// the MySQL protocol (a server handshake, protocol version 10) to every connection.
func mysqlEndpoint(t *testing.T) string {
	t.Helper()
	if addr := os.Getenv("TEST_MYSQL_ADDR"); addr != "" {
		return addr
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	payload := append([]byte{10}, "8.0.0-otcsim-test\x00"...)
	packet := append([]byte{byte(len(payload)), 0, 0, 0}, payload...)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write(packet)
			c.Close()
		}
	}()
	return l.Addr().String()
}

// readHandshake reads the server's first packet and returns its protocol version.
func readHandshake(t *testing.T, addr string) byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	head := make([]byte, 5)
	_, err = io.ReadFull(conn, head)
	require.NoError(t, err)
	return head[4]
}

// TestUnmodifiedSDKProgram plays an unmodified gophertelekomcloud program that knows the simulator
// only through the OS_* variables it prints: it logs in with AuthOptionsFromEnv, lists flavors,
// finds the network by name (VPC v1, VPC v3 and Neutron, the VPC also as its Neutron router),
// creates an instance, sees it go ACTIVE, enlarges its volume and deletes it. The instance is backed
// by a MySQL-compatible server given with --endpoint; --duration makes every operation take 1 s.
func TestUnmodifiedSDKProgram(t *testing.T) {
	exports := startOtcsim(t, "--duration", "1s", "--endpoint", "sdk-demo-01="+mysqlEndpoint(t))
	exportOnly(t, exports)

	// From here on: what any program using the SDK does.
	ao, err := openstack.AuthOptionsFromEnv()
	require.NoError(t, err)
	provider, err := openstack.AuthenticatedClient(ao)
	require.NoError(t, err)
	rds, err := openstack.NewRDSV3(provider, golangsdk.EndpointOpts{Region: os.Getenv("OS_REGION_NAME")})
	require.NoError(t, err)

	fl, err := flavors.ListFlavors(rds, flavors.ListOpts{DatabaseName: "MySQL", VersionName: "8.0"})
	require.NoError(t, err)
	var flavor string
	for _, f := range fl {
		if f.InstanceMode == "single" && f.AzStatus["eu-de-01"] == "normal" {
			flavor = f.SpecCode
			break
		}
	}
	require.NotEmpty(t, flavor, "a single flavor available in eu-de-01")

	// The network by name, as a program that knows only the names does it: the VPC through VPC v1,
	// the subnet and the security group through Neutron. RDS wants the subnet's Neutron network id.
	netV1, err := openstack.NewNetworkV1(provider, golangsdk.EndpointOpts{Region: os.Getenv("OS_REGION_NAME")})
	require.NoError(t, err)
	netV2, err := openstack.NewNetworkV2(provider, golangsdk.EndpointOpts{Region: os.Getenv("OS_REGION_NAME")})
	require.NoError(t, err)
	vpcList, err := vpcs.List(netV1, vpcs.ListOpts{Name: "frank-test"})
	require.NoError(t, err)
	require.Len(t, vpcList, 1)
	pages, err := subnets.List(netV2, subnets.ListOpts{Name: "frank-test"}).AllPages()
	require.NoError(t, err)
	subnetList, err := subnets.ExtractSubnets(pages)
	require.NoError(t, err)
	require.Len(t, subnetList, 1)
	network, err := networks.Get(netV2, subnetList[0].NetworkID).Extract()
	require.NoError(t, err)
	require.Equal(t, []string{subnetList[0].ID}, network.Subnets, "the network holds the subnet")
	secGroup, err := groups.IDFromName(netV2, "golang")
	require.NoError(t, err)
	assert.Equal(t, otcsim.SeedSubnetID, network.ID, "the Neutron network id is the VPC v1 subnet id")

	// The same VPC as an OpenStack program finds it (its Neutron router) and through VPC v3 (the
	// catalog's "vpc" entry).
	pages, err = routers.List(netV2, routers.ListOpts{Name: "frank-test"}).AllPages()
	require.NoError(t, err)
	routerList, err := routers.ExtractRouters(pages)
	require.NoError(t, err)
	require.Len(t, routerList, 1)
	assert.Equal(t, vpcList[0].ID, routerList[0].ID, "a VPC is the Neutron router with the same id")
	vpcV3, err := openstack.NewVpcV3(provider, golangsdk.EndpointOpts{Region: os.Getenv("OS_REGION_NAME")})
	require.NoError(t, err)
	v3List, err := vpcsv3.List(vpcV3, vpcsv3.ListOpts{Name: []string{"frank-test"}})
	require.NoError(t, err)
	require.Len(t, v3List, 1)
	assert.Equal(t, vpcList[0].ID, v3List[0].Id)
	v3Got, err := vpcsv3.Get(vpcV3, v3List[0].Id)
	require.NoError(t, err)
	assert.Equal(t, vpcList[0].CIDR, v3Got.Cidr)

	created, err := instances.Create(rds, instances.CreateRdsOpts{
		Name:             "sdk-demo-01",
		Datastore:        &instances.Datastore{Type: "MySQL", Version: "8.0"},
		FlavorRef:        flavor,
		Volume:           &instances.Volume{Type: "CLOUDSSD", Size: 40},
		Region:           os.Getenv("OS_REGION_NAME"),
		AvailabilityZone: "eu-de-01",
		VpcId:            vpcList[0].ID,
		SubnetId:         network.ID,
		SecurityGroupId:  secGroup,
		Password:         "Demo-Passw0rd!",
	})
	require.NoError(t, err)
	id := created.Instance.Id
	assert.Equal(t, otcsim.StatusBuild, created.Instance.Status)

	get := func() *instances.InstanceResponse {
		res, err := instances.List(rds, instances.ListOpts{Id: id})
		require.NoError(t, err)
		if len(res.Instances) == 0 {
			return nil
		}
		return &res.Instances[0]
	}
	activeWith := func(size int) func() bool {
		return func() bool {
			in := get()
			return in != nil && in.Status == otcsim.StatusActive && in.Volume.Size == size
		}
	}
	require.Eventually(t, activeWith(40), 30*time.Second, 100*time.Millisecond, "the instance goes ACTIVE")

	in := get()
	require.Len(t, in.PrivateIps, 1)
	assert.Equal(t, byte(10), readHandshake(t, net.JoinHostPort(in.PrivateIps[0], strconv.Itoa(in.Port))),
		"the instance's address is a MySQL server's (protocol version 10)")

	_, err = instances.EnlargeVolume(rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: 50})
	require.NoError(t, err)
	require.Eventually(t, activeWith(50), 30*time.Second, 100*time.Millisecond, "the volume grows to 50 GB")

	_, err = instances.Delete(rds, id)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return get() == nil }, 30*time.Second, 100*time.Millisecond, "the instance vanishes")
}

// TestEnvLoaderLogin logs in the other way SDK programs (and the Terraform provider) do: the
// clouds.yaml loader, which without any clouds.yaml builds its cloud from the same OS_* variables.
func TestEnvLoaderLogin(t *testing.T) {
	exportOnly(t, startOtcsim(t))
	t.Chdir(t.TempDir())          // no clouds.yaml in the working directory ...
	t.Setenv("HOME", t.TempDir()) // ... nor in ~/.config/openstack

	provider, err := openstack.NewEnv("OS_").AuthenticatedClient()
	require.NoError(t, err)
	rds, err := openstack.NewRDSV3(provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(rds.Endpoint, strings.TrimSuffix(os.Getenv("OS_AUTH_URL"), "/v3")),
		"the catalog points back at the simulator: %s", rds.Endpoint)
	res, err := instances.List(rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.Zero(t, res.TotalCount)

	resp, err := http.Get(strings.TrimSuffix(os.Getenv("OS_AUTH_URL"), "/v3") + "/_sim/state")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no control API without --control")
}
