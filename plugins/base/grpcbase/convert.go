package grpcbase

import (
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/base/proto"
)

// Conversions between the SDK's values and their wire messages. A nil
// pointer, a zero time and a nil error travel as unset fields and come back
// as such.

// TimeToProto returns t as a timestamp; a zero time is unset (nil).
func TimeToProto(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// TimeFromProto returns ts as a time; unset is the zero time.
func TimeFromProto(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

// ErrToProto returns err's message; a nil error is unset (nil).
func ErrToProto(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// ErrFromProto returns an error with message s; unset is a nil error.
func ErrFromProto(s *string) error {
	if s == nil {
		return nil
	}
	return errors.New(*s)
}

// OptBytes copies b; nil stays nil (unset) and empty stays empty (set).
func OptBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...) // non-nil, so that empty stays set
}

// IntPtrToProto returns *p as an optional int64; nil is unset.
func IntPtrToProto(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

// IntPtrFromProto returns an optional int64 as *int; unset is nil.
func IntPtrFromProto(p *int64) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

// PluginInfoToProto returns the PluginInfo call's response for in.
func PluginInfoToProto(in *base.PluginInfo) *proto.PluginInfoResponse {
	return &proto.PluginInfoResponse{
		Type:              in.Type,
		PluginApiVersions: in.PluginAPIVersions,
		PluginVersion:     in.PluginVersion,
		Name:              in.Name,
	}
}

// PluginInfoFromProto returns the plugin info in the PluginInfo call's
// response.
func PluginInfoFromProto(in *proto.PluginInfoResponse) *base.PluginInfo {
	return &base.PluginInfo{
		Type:              in.GetType(),
		PluginAPIVersions: in.GetPluginApiVersions(),
		PluginVersion:     in.GetPluginVersion(),
		Name:              in.GetName(),
	}
}

// SchemaToProto returns the ConfigSchema call's response for in; a nil
// schema and nil fields are left out.
func SchemaToProto(in *base.Schema) *proto.ConfigSchemaResponse {
	out := &proto.ConfigSchemaResponse{}
	if in == nil {
		return out
	}
	for _, f := range in.Fields {
		if f == nil {
			continue
		}
		out.Fields = append(out.Fields, &proto.SchemaField{
			Name:        f.Name,
			Type:        string(f.Type),
			Required:    f.Required,
			DefaultJson: OptBytes(f.Default),
			Description: f.Description,
		})
	}
	return out
}

// SchemaFromProto returns the schema in the ConfigSchema call's response.
func SchemaFromProto(in *proto.ConfigSchemaResponse) *base.Schema {
	out := &base.Schema{}
	for _, f := range in.GetFields() {
		out.Fields = append(out.Fields, &base.Field{
			Name:        f.GetName(),
			Type:        base.FieldType(f.GetType()),
			Required:    f.GetRequired(),
			Default:     OptBytes(f.DefaultJson),
			Description: f.GetDescription(),
		})
	}
	return out
}

// ConfigToProto returns the SetConfig call's request for in.
func ConfigToProto(in *base.Config) *proto.SetConfigRequest {
	out := &proto.SetConfigRequest{}
	if in == nil {
		return out
	}
	out.PluginConfigJson = OptBytes(in.PluginConfig)
	if a := in.AgentConfig; a != nil {
		out.AgentConfig = &proto.AgentConfig{
			NodeId:        a.NodeID,
			Region:        a.Region,
			Datacenter:    a.Datacenter,
			DataDir:       a.DataDir,
			ClientMinPort: IntPtrToProto(a.ClientMinPort),
			ClientMaxPort: IntPtrToProto(a.ClientMaxPort),
		}
	}
	return out
}

// ConfigFromProto returns the config in the SetConfig call's request.
func ConfigFromProto(in *proto.SetConfigRequest) *base.Config {
	out := &base.Config{PluginConfig: OptBytes(in.PluginConfigJson)}
	if a := in.GetAgentConfig(); a != nil {
		out.AgentConfig = &base.AgentConfig{
			NodeID:        a.GetNodeId(),
			Region:        a.GetRegion(),
			Datacenter:    a.GetDatacenter(),
			DataDir:       a.GetDataDir(),
			ClientMinPort: IntPtrFromProto(a.ClientMinPort),
			ClientMaxPort: IntPtrFromProto(a.ClientMaxPort),
		}
	}
	return out
}
