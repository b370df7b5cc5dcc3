package otc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answerBody is an answer's body as net/http hands it over: its bytes, then the error that ends
// them (io.EOF for a whole answer); it counts what was read from it and whether it was closed.
type answerBody struct {
	r      io.Reader
	err    error
	read   int
	closed bool
}

func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *answerBody) Close() error { b.closed = true; return nil }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// repeated is n bytes of x without holding them.
func repeated(x byte, n int) io.Reader { return io.LimitReader(byteReader(x), int64(n)) }

type byteReader byte

func (b byteReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestTransportReadsAheadOnlySmallAnswers: the transport reads a small answer whole before the SDK
// sees it, so that its connection serves the next request even where the SDK never reads the
// answer; a larger one goes to the SDK as it arrives, which reads it once (extract.Into,
// pagination and the error path read to the end), instead of the transport holding a second
// copy of up to 16 MiB (a log page of the tenant's own entries) in the memory the tenants share.
// Either way the SDK reads the same bytes and the error that ended them.
func TestTransportReadsAheadOnlySmallAnswers(t *testing.T) {
	errCut := errors.New("connection reset")
	const ahead = 64 << 10
	cases := map[string]struct {
		reason  string
		size    int   // the answer's bytes
		cut     error // what ends them, nil for their end
		length  bool  // announced in Content-Length
		aheadAt int   // at most this much read before the SDK reads
		whole   bool  // read to its end and closed before the SDK reads
		wantErr error // what the SDK's reading ends with, nil for its end
	}{
		"small, announced": {reason: "an answer of a known small length is read whole",
			size: 1 << 10, length: true, aheadAt: 1 << 10, whole: true},
		"small, chunked": {reason: "an answer of unknown length that turns out small is read whole",
			size: 3 << 10, aheadAt: 3 << 10, whole: true},
		"empty": {reason: "a 202 or 204 without a body frees its connection at once",
			size: 0, length: true, aheadAt: 0, whole: true},
		"at the read-ahead": {reason: "an answer of exactly the read-ahead is still read whole",
			size: ahead, length: true, aheadAt: ahead, whole: true},
		"large, announced": {reason: "a listing or log page above the read-ahead is the SDK's to read",
			size: 4 << 20, length: true, aheadAt: ahead + 1},
		"large, chunked": {reason: "the same of unknown length, which read whole cost several copies while its buffer grew",
			size: 4 << 20, aheadAt: ahead + 1},
		"beyond the limit": {reason: "an answer above 16 MiB fails the SDK's reading at 16 MiB",
			size: maxResponseBytes + 100, aheadAt: ahead + 1, wantErr: errResponseTooLarge},
		"small, cut": {reason: "a small answer cut short gives the SDK its bytes, then the failure",
			size: 100, cut: errCut, aheadAt: 100, whole: true, wantErr: errCut},
		"large, cut": {reason: "a large answer cut short gives the SDK its bytes, then the failure",
			size: 1 << 20, cut: errCut, aheadAt: ahead + 1, wantErr: errCut},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			body := &answerBody{r: repeated('x', tc.size), err: tc.cut}
			length := int64(-1)
			if tc.length {
				length = int64(tc.size)
			}
			base := roundTripFunc(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: body, ContentLength: length}, nil
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tr := &transport{base: base, calls: &calls{}}
			id, _ := tr.calls.add(ctx)
			req, err := http.NewRequest(http.MethodGet, "http://rds.otc.example/v3/p/instances", nil)
			require.NoError(t, err)
			req.Header.Set(callHeader, id)

			resp, err := tr.RoundTrip(req)
			require.NoError(t, err, tc.reason)
			assert.LessOrEqual(t, body.read, tc.aheadAt, "%s: read before the SDK reads", tc.reason)
			assert.Equal(t, tc.whole, body.closed, "%s: closed before the SDK reads", tc.reason)

			data, err := io.ReadAll(resp.Body)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr, tc.reason)
			} else {
				require.NoError(t, err, tc.reason)
			}
			want := min(tc.size, maxResponseBytes)
			require.Len(t, data, want, tc.reason)
			assert.Zero(t, len(bytes.Trim(data, "x")), "%s: the answer's bytes", tc.reason)
			require.NoError(t, resp.Body.Close())
			assert.True(t, body.closed, "%s: closed once the SDK closes it", tc.reason)
		})
	}
}
