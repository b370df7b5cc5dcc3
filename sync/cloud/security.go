package cloud

import "context"

// Security are the changes to how an instance is reached: its security group, its database port
// and SSL. Each returns at once; OTC carries the change out afterwards.
type Security interface {
	// SetSecurityGroup moves the instance to the security group with this id and returns OTC's
	// job (workflow) id. The instance stays ACTIVE while the job runs.
	SetSecurityGroup(ctx context.Context, id, securityGroupID string) (jobID string, err error)
	// UpdatePort moves the database to port and returns OTC's job (workflow) id. The instance is
	// MODIFYING DATABASE PORT until it is done.
	UpdatePort(ctx context.Context, id string, port int) (jobID string, err error)
	// SwitchSSL turns SSL on or off (MySQL only) and returns OTC's job id, "" when OTC's answer
	// names none.
	SwitchSSL(ctx context.Context, id string, on bool) (jobID string, err error)
}
