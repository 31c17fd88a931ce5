package api

import (
	"io"
	"net/url"
	"strconv"
)

// EventStream opens GET /v1/event/stream: newline-delimited JSON, one
// {"Index":N,"Events":[...]} per raft apply and {} heartbeats. topics are
// "Topic" or "Topic:key" (Job, Allocation, Evaluation, Deployment, Node or
// *); none means every topic. index > 0 resumes from the first buffered
// event at or after it. The caller closes the stream; the client's context
// (WithContext) ends it too.
func (c *Client) EventStream(topics []string, index uint64, q *QueryOptions) (io.ReadCloser, error) {
	v := url.Values{}
	for _, t := range topics {
		v.Add("topic", t)
	}
	if index > 0 {
		v.Set("index", strconv.FormatUint(index, 10))
	}
	endpoint := "/v1/event/stream"
	if len(v) > 0 {
		endpoint += "?" + v.Encode()
	}
	return c.stream(endpoint, q)
}
