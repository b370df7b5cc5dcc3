package view

import "context"

// The security changes pass through and mark the instance for a fresh read, as every change does.

func (v *View) SetSecurityGroup(ctx context.Context, id, securityGroupID string) (string, error) {
	defer v.touch(id)
	return v.Client.SetSecurityGroup(ctx, id, securityGroupID)
}

func (v *View) UpdatePort(ctx context.Context, id string, port int) (string, error) {
	defer v.touch(id)
	return v.Client.UpdatePort(ctx, id, port)
}

func (v *View) SwitchSSL(ctx context.Context, id string, on bool) (string, error) {
	defer v.touch(id)
	return v.Client.SwitchSSL(ctx, id, on)
}
