package agent

// nodeClient implements nodeClientSource: the agent's client for the
// /v1/client endpoints, nil when the agent runs none.
func (a *Agent) nodeClient() nodeClient {
	if a.client == nil {
		return nil
	}
	return a.client
}
