package grpcdriver

import (
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// Conversions between the SDK's values and their wire messages. A nil
// pointer, a zero time and a nil error travel as unset fields and come back
// as such.

func timeToProto(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func timeFromProto(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

func errToProto(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

func errFromProto(s *string) error {
	if s == nil {
		return nil
	}
	return errors.New(*s)
}

func optInt(n int) *int64 {
	if n == 0 {
		return nil
	}
	v := int64(n)
	return &v
}

func optBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...) // non-nil, so that empty stays set
}

func pluginInfoToProto(in *base.PluginInfo) *proto.PluginInfoResponse {
	return &proto.PluginInfoResponse{
		Type:              in.Type,
		PluginApiVersions: in.PluginAPIVersions,
		PluginVersion:     in.PluginVersion,
		Name:              in.Name,
	}
}

func pluginInfoFromProto(in *proto.PluginInfoResponse) *base.PluginInfo {
	return &base.PluginInfo{
		Type:              in.GetType(),
		PluginAPIVersions: in.GetPluginApiVersions(),
		PluginVersion:     in.GetPluginVersion(),
		Name:              in.GetName(),
	}
}

func schemaToProto(in *base.Schema) *proto.ConfigSchemaResponse {
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
			DefaultJson: optBytes(f.Default),
			Description: f.Description,
		})
	}
	return out
}

func schemaFromProto(in *proto.ConfigSchemaResponse) *base.Schema {
	out := &base.Schema{}
	for _, f := range in.GetFields() {
		out.Fields = append(out.Fields, &base.Field{
			Name:        f.GetName(),
			Type:        base.FieldType(f.GetType()),
			Required:    f.GetRequired(),
			Default:     optBytes(f.DefaultJson),
			Description: f.GetDescription(),
		})
	}
	return out
}

func intPtrToProto(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

func intPtrFromProto(p *int64) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

func configToProto(in *base.Config) *proto.SetConfigRequest {
	out := &proto.SetConfigRequest{}
	if in == nil {
		return out
	}
	out.PluginConfigJson = optBytes(in.PluginConfig)
	if a := in.AgentConfig; a != nil {
		out.AgentConfig = &proto.AgentConfig{
			NodeId:        a.NodeID,
			Region:        a.Region,
			Datacenter:    a.Datacenter,
			DataDir:       a.DataDir,
			ClientMinPort: intPtrToProto(a.ClientMinPort),
			ClientMaxPort: intPtrToProto(a.ClientMaxPort),
		}
	}
	return out
}

func configFromProto(in *proto.SetConfigRequest) *base.Config {
	out := &base.Config{PluginConfig: optBytes(in.PluginConfigJson)}
	if a := in.GetAgentConfig(); a != nil {
		out.AgentConfig = &base.AgentConfig{
			NodeID:        a.GetNodeId(),
			Region:        a.GetRegion(),
			Datacenter:    a.GetDatacenter(),
			DataDir:       a.GetDataDir(),
			ClientMinPort: intPtrFromProto(a.ClientMinPort),
			ClientMaxPort: intPtrFromProto(a.ClientMaxPort),
		}
	}
	return out
}

func capabilitiesToProto(in *drivers.Capabilities) *proto.Capabilities {
	if in == nil {
		return nil
	}
	return &proto.Capabilities{SendSignals: in.SendSignals, Exec: in.Exec, FsIsolation: in.FSIsolation}
}

func capabilitiesFromProto(in *proto.Capabilities) *drivers.Capabilities {
	if in == nil {
		return &drivers.Capabilities{}
	}
	return &drivers.Capabilities{SendSignals: in.GetSendSignals(), Exec: in.GetExec(), FSIsolation: in.GetFsIsolation()}
}

func fingerprintToProto(in *drivers.Fingerprint) *proto.Fingerprint {
	if in == nil {
		return nil
	}
	return &proto.Fingerprint{Attributes: in.Attributes, Health: in.Health, HealthDescription: in.HealthDescription}
}

func fingerprintFromProto(in *proto.Fingerprint) *drivers.Fingerprint {
	return &drivers.Fingerprint{
		Attributes:        in.GetAttributes(),
		Health:            in.GetHealth(),
		HealthDescription: in.GetHealthDescription(),
	}
}

func taskConfigToProto(in *drivers.TaskConfig) *proto.TaskConfig {
	if in == nil {
		return nil
	}
	out := &proto.TaskConfig{
		Id:            in.ID,
		JobName:       in.JobName,
		JobId:         in.JobID,
		TaskGroupName: in.TaskGroupName,
		Name:          in.Name,
		Namespace:     in.Namespace,
		AllocId:       in.AllocID,
		User:          in.User,
		Env:           in.Env,
		AllocDir:      in.AllocDir,
		TaskDir: &proto.TaskDir{
			Dir:        in.TaskDir.Dir,
			LocalDir:   in.TaskDir.LocalDir,
			SecretsDir: in.TaskDir.SecretsDir,
			SharedDir:  in.TaskDir.SharedDir,
			LogDir:     in.TaskDir.LogDir,
		},
		StdoutPath:       in.StdoutPath,
		StderrPath:       in.StderrPath,
		LogMaxFiles:      optInt(in.LogMaxFiles),
		LogMaxFileSizeMb: optInt(in.LogMaxFileSizeMB),
		KillSignal:       in.KillSignal,
		RawConfig:        optBytes(in.RawConfig),
		NetworkMode:      in.NetworkMode,
	}
	if r := in.Resources; r != nil {
		out.Resources = &proto.Resources{CpuShares: r.CPUShares, MemoryMb: r.MemoryMB, MemoryMaxMb: r.MemoryMaxMB}
	}
	out.Devices, out.Mounts = devicesToProto(in.Devices), mountsToProto(in.Mounts)
	return out
}

func taskConfigFromProto(in *proto.TaskConfig) *drivers.TaskConfig {
	if in == nil {
		return nil
	}
	td := in.GetTaskDir()
	out := &drivers.TaskConfig{
		ID:            in.GetId(),
		JobName:       in.GetJobName(),
		JobID:         in.GetJobId(),
		TaskGroupName: in.GetTaskGroupName(),
		Name:          in.GetName(),
		Namespace:     in.GetNamespace(),
		AllocID:       in.GetAllocId(),
		User:          in.GetUser(),
		Env:           in.GetEnv(),
		AllocDir:      in.GetAllocDir(),
		TaskDir: drivers.TaskDir{
			Dir:        td.GetDir(),
			LocalDir:   td.GetLocalDir(),
			SecretsDir: td.GetSecretsDir(),
			SharedDir:  td.GetSharedDir(),
			LogDir:     td.GetLogDir(),
		},
		StdoutPath:       in.GetStdoutPath(),
		StderrPath:       in.GetStderrPath(),
		LogMaxFiles:      int(in.GetLogMaxFiles()),
		LogMaxFileSizeMB: int(in.GetLogMaxFileSizeMb()),
		KillSignal:       in.GetKillSignal(),
		RawConfig:        optBytes(in.RawConfig),
		NetworkMode:      in.GetNetworkMode(),
	}
	if r := in.GetResources(); r != nil {
		out.Resources = &drivers.Resources{CPUShares: r.GetCpuShares(), MemoryMB: r.GetMemoryMb(), MemoryMaxMB: r.GetMemoryMaxMb()}
	}
	out.Devices, out.Mounts = devicesFromProto(in.GetDevices()), mountsFromProto(in.GetMounts())
	return out
}

func handleToProto(in *drivers.TaskHandle) *proto.TaskHandle {
	if in == nil {
		return nil
	}
	return &proto.TaskHandle{
		Version:     int64(in.Version),
		Config:      taskConfigToProto(in.Config),
		State:       in.State,
		DriverState: optBytes(in.DriverState),
	}
}

func handleFromProto(in *proto.TaskHandle) *drivers.TaskHandle {
	if in == nil {
		return nil
	}
	return &drivers.TaskHandle{
		Version:     int(in.GetVersion()),
		Config:      taskConfigFromProto(in.GetConfig()),
		State:       in.GetState(),
		DriverState: optBytes(in.DriverState),
	}
}

func exitResultToProto(in *drivers.ExitResult) *proto.ExitResult {
	if in == nil {
		return nil
	}
	return &proto.ExitResult{
		ExitCode:  int64(in.ExitCode),
		Signal:    int64(in.Signal),
		OomKilled: in.OOMKilled,
		Error:     errToProto(in.Err),
	}
}

func exitResultFromProto(in *proto.ExitResult) *drivers.ExitResult {
	if in == nil {
		return nil
	}
	return &drivers.ExitResult{
		ExitCode:  int(in.GetExitCode()),
		Signal:    int(in.GetSignal()),
		OOMKilled: in.GetOomKilled(),
		Err:       errFromProto(in.Error),
	}
}

func taskStatusToProto(in *drivers.TaskStatus) *proto.TaskStatus {
	if in == nil {
		return nil
	}
	return &proto.TaskStatus{
		Id:               in.ID,
		Name:             in.Name,
		State:            in.State,
		StartedAt:        timeToProto(in.StartedAt),
		CompletedAt:      timeToProto(in.CompletedAt),
		ExitResult:       exitResultToProto(in.ExitResult),
		DriverAttributes: in.DriverAttributes,
	}
}

func taskStatusFromProto(in *proto.TaskStatus) *drivers.TaskStatus {
	if in == nil {
		return nil
	}
	return &drivers.TaskStatus{
		ID:               in.GetId(),
		Name:             in.GetName(),
		State:            in.GetState(),
		StartedAt:        timeFromProto(in.GetStartedAt()),
		CompletedAt:      timeFromProto(in.GetCompletedAt()),
		ExitResult:       exitResultFromProto(in.GetExitResult()),
		DriverAttributes: in.GetDriverAttributes(),
	}
}

func usageToProto(in *drivers.TaskResourceUsage) *proto.TaskResourceUsage {
	if in == nil {
		return nil
	}
	out := &proto.TaskResourceUsage{
		Timestamp:      in.Timestamp,
		CpuPercent:     in.CPUPercent,
		CpuTotalTicks:  in.CPUTotalTicks,
		MemoryRss:      in.MemoryRSS,
		MemoryCache:    in.MemoryCache,
		MemorySwap:     in.MemorySwap,
		MemoryMaxUsage: in.MemoryMaxUsage,
	}
	if in.Pids != nil {
		out.Pids = make(map[string]*proto.TaskResourceUsage, len(in.Pids))
		for pid, u := range in.Pids {
			out.Pids[pid] = usageToProto(u)
		}
	}
	return out
}

func usageFromProto(in *proto.TaskResourceUsage) *drivers.TaskResourceUsage {
	if in == nil {
		return nil
	}
	out := &drivers.TaskResourceUsage{
		Timestamp:      in.GetTimestamp(),
		CPUPercent:     in.GetCpuPercent(),
		CPUTotalTicks:  in.GetCpuTotalTicks(),
		MemoryRSS:      in.GetMemoryRss(),
		MemoryCache:    in.GetMemoryCache(),
		MemorySwap:     in.GetMemorySwap(),
		MemoryMaxUsage: in.GetMemoryMaxUsage(),
	}
	if len(in.GetPids()) > 0 {
		out.Pids = make(map[string]*drivers.TaskResourceUsage, len(in.GetPids()))
		for pid, u := range in.GetPids() {
			out.Pids[pid] = usageFromProto(u)
		}
	}
	return out
}

func taskEventToProto(in *drivers.TaskEvent) *proto.TaskEvent {
	if in == nil {
		return nil
	}
	return &proto.TaskEvent{
		TaskId:      in.TaskID,
		AllocId:     in.AllocID,
		TaskName:    in.TaskName,
		Timestamp:   timeToProto(in.Timestamp),
		Message:     in.Message,
		Annotations: in.Annotations,
		Error:       errToProto(in.Err),
	}
}

func taskEventFromProto(in *proto.TaskEvent) *drivers.TaskEvent {
	return &drivers.TaskEvent{
		TaskID:      in.GetTaskId(),
		AllocID:     in.GetAllocId(),
		TaskName:    in.GetTaskName(),
		Timestamp:   timeFromProto(in.GetTimestamp()),
		Message:     in.GetMessage(),
		Annotations: in.GetAnnotations(),
		Err:         errFromProto(in.Error),
	}
}

func execResultToProto(in *drivers.ExecTaskResult) *proto.ExecTaskResponse {
	if in == nil {
		return &proto.ExecTaskResponse{}
	}
	return &proto.ExecTaskResponse{Stdout: in.Stdout, Stderr: in.Stderr, ExitResult: exitResultToProto(in.ExitResult)}
}

func execResultFromProto(in *proto.ExecTaskResponse) *drivers.ExecTaskResult {
	return &drivers.ExecTaskResult{
		Stdout:     in.GetStdout(),
		Stderr:     in.GetStderr(),
		ExitResult: exitResultFromProto(in.GetExitResult()),
	}
}
