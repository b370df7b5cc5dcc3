package otc

import (
	"context"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/security"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// SetSecurityGroup moves the instance to another security group and returns the workflow id.
//
// NOTE: OTC answers {"workflowId"} here, not {"job_id"}; it is a job id all the same (GET /jobs).
// The instance stays ACTIVE while the job runs: only the listing's security_group_id shows the end.
func (c *Client) SetSecurityGroup(ctx context.Context, id, securityGroupID string) (string, error) {
	const op = "SetSecurityGroup"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	if securityGroupID == "" {
		return "", cloud.Errorf(cloud.KindInvalid, op, "", "no security group id")
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return security.SetSecurityGroup(s.rds, security.SetSecurityGroupOpts{InstanceId: id, SecurityGroupId: securityGroupID})
	})
}

// UpdatePort moves the database to another port and returns the workflow id; the instance is
// MODIFYING DATABASE PORT meanwhile.
func (c *Client) UpdatePort(ctx context.Context, id string, port int) (string, error) {
	const op = "UpdatePort"
	if err := checkFilter(op, "instance id", id); err != nil {
		return "", err
	}
	if port <= 0 || port > 65535 {
		return "", cloud.Errorf(cloud.KindInvalid, op, "", "invalid port %d", port)
	}
	return jobCall(ctx, c, op, func(s services) (*string, error) {
		return security.UpdatePort(s.rds, security.UpdatePortOpts{InstanceId: id, Port: int32(port)})
	})
}

// SwitchSSL turns SSL on or off.
//
// NOTE: OTC's API reference names a job_id in the answer; the SDK v0.9.8 reads no body, so the
// switch is followed by the instance's status and its enable_ssl, not by the job.
func (c *Client) SwitchSSL(ctx context.Context, id string, on bool) error {
	const op = "SwitchSSL"
	if err := checkFilter(op, "instance id", id); err != nil {
		return err
	}
	_, err := call(ctx, c, op, func(s services) (struct{}, error) {
		return struct{}{}, security.SwitchSsl(s.rds, security.SwitchSslOpts{InstanceId: id, SslOption: on})
	})
	return err
}
