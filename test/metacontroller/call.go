package metacontroller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Hooks are the sync and finalize hooks in process; *reconcile.Reconciler is one.
type Hooks interface {
	Sync(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error)
	Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error)
}

// Sync calls the sync hook with the next request and applies its answer. An error from the hook
// changes nothing and is returned as it is. The object must not be deleting.
func (o *Object) Sync(ctx context.Context, h Hooks) (*hook.SyncResponse, error) {
	if o.Deleting() {
		return nil, fmt.Errorf("the object is being deleted: Metacontroller calls finalize")
	}
	return callHook(ctx, o, h.Sync)
}

// Finalize calls the finalize hook with the next request and applies its answer, as Sync does.
// The object must be deleting (see Delete).
func (o *Object) Finalize(ctx context.Context, h Hooks) (*hook.FinalizeResponse, error) {
	if !o.Deleting() {
		return nil, fmt.Errorf("the object has no deletionTimestamp: Metacontroller calls sync")
	}
	return callHook(ctx, o, h.Finalize)
}

func callHook[R any](ctx context.Context, o *Object, call func(context.Context, *hook.Request) (*R, error)) (*R, error) {
	req, err := o.Request()
	if err != nil {
		return nil, err
	}
	resp, err := call(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp, o.ApplyResponse(resp)
}

// ApplyResponse applies an in-process answer (a *hook.SyncResponse or *hook.FinalizeResponse)
// through its JSON, as the server would send it. Callers that made the call themselves (a
// duplicate, a stale request) use it to apply the answer the cluster takes.
func (o *Object) ApplyResponse(resp any) error {
	body, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	a, err := Decode(body)
	if err != nil {
		return err
	}
	return o.Apply(a)
}

// Exchange is one call over HTTP.
type Exchange struct {
	Code   int
	Header http.Header
	Body   []byte
	// Answer is the decoded answer on 200, nil otherwise.
	Answer *Answer
}

// Post sends the next request to the hook server at baseURL (/sync or /finalize) and, on 200,
// applies the answer. Any other status changes nothing and is no error: Metacontroller retries.
// An answer that does not decode, or that Apply refuses, is an error wrapping ErrHook.
func (o *Object) Post(client *http.Client, baseURL string) (*Exchange, error) {
	body, err := o.Body()
	if err != nil {
		return nil, err
	}
	x, err := post(client, strings.TrimSuffix(baseURL, "/")+o.Path(), body)
	if err != nil || x.Code != http.StatusOK {
		return x, err
	}
	if x.Answer, err = Decode(x.Body); err != nil {
		return x, err
	}
	return x, o.Apply(x.Answer)
}

// post sends a body as Metacontroller does: a POST of JSON, no authentication.
func post(client *http.Client, url string, body []byte) (*Exchange, error) {
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Exchange{Code: resp.StatusCode, Header: resp.Header, Body: out}, nil
}
