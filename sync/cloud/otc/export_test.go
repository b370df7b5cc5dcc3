package otc

// DroppedRequests is how many requests c refused to send because their call had ended.
func DroppedRequests(c *Client) int64 { return c.transport.dropped.Load() }
