package api

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// stream GETs endpoint with the query options and returns the open
// response body, for endpoints that stream (logs) or return raw bytes
// (cat, readat). The caller closes it. A status other than 200 is an
// *UnexpectedResponseError, as for other requests.
func (c *Client) stream(endpoint string, q *QueryOptions) (io.ReadCloser, error) {
	u, err := c.base.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("build URL for %s: %w", endpoint, err)
	}
	merged := u.Query()
	for k, vs := range c.queryParams(q) {
		for _, v := range vs {
			merged.Add(k, v)
		}
	}
	u.RawQuery = merged.Encode()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request GET %s: %w", endpoint, err)
	}
	if c.secretID != "" {
		req.Header.Set("X-Nomad-Token", c.secretID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &ConnectError{Address: c.base.String(), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &UnexpectedResponseError{
			Method: http.MethodGet, Path: u.Path, StatusCode: resp.StatusCode,
			Message: strings.TrimSpace(string(msg)),
		}
	}
	return resp.Body, nil
}
