package otc

import "time"

// DroppedRequests is how many requests c refused to send because their call had ended.
func DroppedRequests(c *Client) int64 { return c.transport.dropped.Load() }

// SetNow makes c read the time from now (the network cache, the renewal backoff).
func SetNow(c *Client, now func() time.Time) { c.now, c.auth.now = now, now }
