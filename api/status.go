package api

// Status is the cluster status endpoints of the API.
type Status struct{ c *Client }

// Status returns the cluster status endpoints.
func (c *Client) Status() *Status { return &Status{c: c} }

// Leader returns the RPC address of the cluster's leader; empty when there
// is none.
func (s *Status) Leader() (string, error) {
	var leader string
	if _, err := s.c.query("/v1/status/leader", &leader, nil); err != nil {
		return "", err
	}
	return leader, nil
}

// Peers returns the RPC addresses of the cluster's servers.
func (s *Status) Peers() ([]string, error) {
	var peers []string
	if _, err := s.c.query("/v1/status/peers", &peers, nil); err != nil {
		return nil, err
	}
	return peers, nil
}
