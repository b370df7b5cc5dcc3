package cloudtest

import "context"

// SecurityFns holds the function fields of cloud.Security. It is embedded in Fake.
type SecurityFns struct {
	SetSecurityGroupFn func(ctx context.Context, id, securityGroupID string) (string, error)
	UpdatePortFn       func(ctx context.Context, id string, port int) (string, error)
	SwitchSSLFn        func(ctx context.Context, id string, on bool) (string, error)
}

// SetSecurityGroup implements cloud.Security.
func (f *Fake) SetSecurityGroup(ctx context.Context, id, securityGroupID string) (string, error) {
	f.record("SetSecurityGroup")
	if f.SetSecurityGroupFn == nil {
		return "", unexpected("SetSecurityGroup")
	}
	return f.SetSecurityGroupFn(ctx, id, securityGroupID)
}

// UpdatePort implements cloud.Security.
func (f *Fake) UpdatePort(ctx context.Context, id string, port int) (string, error) {
	f.record("UpdatePort")
	if f.UpdatePortFn == nil {
		return "", unexpected("UpdatePort")
	}
	return f.UpdatePortFn(ctx, id, port)
}

// SwitchSSL implements cloud.Security.
func (f *Fake) SwitchSSL(ctx context.Context, id string, on bool) (string, error) {
	f.record("SwitchSSL")
	if f.SwitchSSLFn == nil {
		return "", unexpected("SwitchSSL")
	}
	return f.SwitchSSLFn(ctx, id, on)
}
