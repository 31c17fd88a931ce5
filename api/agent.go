package api

// Agent is the endpoints about the agent answering the request.
type Agent struct{ c *Client }

// Agent returns the agent endpoints.
func (c *Client) Agent() *Agent { return &Agent{c: c} }

// AgentSelf describes the agent: its configuration, its membership in the
// cluster and its statistics.
type AgentSelf struct {
	Config map[string]any               `json:"config"`
	Member AgentMember                  `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentMember is a server as a member of the cluster.
type AgentMember struct {
	Name   string
	Addr   string
	Port   uint16
	Tags   map[string]string
	Status string
}

// Self returns the description of the agent (GET /v1/agent/self).
func (a *Agent) Self() (*AgentSelf, error) {
	var out AgentSelf
	if _, err := a.c.query("/v1/agent/self", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}
