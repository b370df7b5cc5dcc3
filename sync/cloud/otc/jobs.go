package otc

import (
	"context"
	"encoding/json"
	"net/url"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// GetJob returns an RDS job. A job OTC does not know (yet) is of kind NotFound.
//
// NOTE: the SDK has no getter for jobs, only instances.WaitForJobCompleted, which blocks. We send its
// request ourselves, GET {rds}/jobs?id=, and decode into the SDK's golangsdk.RDSJobStatus. A job
// created a moment ago may answer 400 DBS.200543 "The job does not exist" (see codes).
func (c *Client) GetJob(ctx context.Context, id string) (*cloud.Job, error) {
	const op = "GetJob"
	if id == "" {
		return nil, cloud.Errorf(cloud.KindInvalid, op, "", "no job id")
	}
	return call(ctx, c, op, func(s services) (*cloud.Job, error) {
		u := s.rds.ServiceURL("jobs") + "?" + url.Values{"id": {id}}.Encode()
		resp, err := s.rds.Get(u, nil, nil)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var st golangsdk.RDSJobStatus
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return nil, err
		}
		if st.Job.Id == "" {
			return nil, cloud.Errorf(cloud.KindNotFound, op, "", "job %s not found", id)
		}
		return toJob(st.Job), nil
	})
}

func toJob(j golangsdk.Job) *cloud.Job {
	out := &cloud.Job{ID: j.Id, Name: j.Name, Status: j.Status, InstanceID: j.Instance.Id}
	if j.FailReason != nil {
		out.FailReason = oneLine(*j.FailReason)
	}
	return out
}
