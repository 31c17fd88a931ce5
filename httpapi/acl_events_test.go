package httpapi

import (
	"testing"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/structs"
)

// TestAllowEventTopics: node and drain events need node read; the others
// need read-job in their namespace. A token that reads only a namespace
// saw drain events (whose payload is a node) before the NodeDrain topic
// was checked as a node topic.
func TestAllowEventTopics(t *testing.T) {
	nsRead := &aclGrant{acl: acl.New(&acl.Policy{Namespaces: []*acl.NamespaceRule{{
		Name: "default", Capabilities: []string{acl.NamespaceCapabilityReadJob},
	}}})}
	nodeRead := &aclGrant{acl: acl.New(&acl.Policy{Node: "read"})}
	tests := []struct {
		name  string
		grant *aclGrant
		event structs.StreamEvent
		want  bool
	}{
		{"acls disabled", nil, structs.StreamEvent{Topic: structs.TopicNodeDrain}, true},
		{"management", &aclGrant{acl: acl.ManagementACL()}, structs.StreamEvent{Topic: structs.TopicNodeDrain}, true},
		{"node event, namespace reader", nsRead, structs.StreamEvent{Topic: structs.TopicNode}, false},
		{"drain event, namespace reader", nsRead, structs.StreamEvent{Topic: structs.TopicNodeDrain}, false},
		{"drain event, node reader", nodeRead, structs.StreamEvent{Topic: structs.TopicNodeDrain}, true},
		{"node event, node reader", nodeRead, structs.StreamEvent{Topic: structs.TopicNode}, true},
		{"job event, namespace reader", nsRead, structs.StreamEvent{Topic: structs.TopicJob, Namespace: "default"}, true},
		{"job event elsewhere, namespace reader", nsRead, structs.StreamEvent{Topic: structs.TopicJob, Namespace: "prod"}, false},
		{"job event, node reader", nodeRead, structs.StreamEvent{Topic: structs.TopicJob}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowEvent(tt.grant, &tt.event); got != tt.want {
				t.Errorf("allowEvent = %v, want %v", got, tt.want)
			}
		})
	}
}
