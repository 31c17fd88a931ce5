package grpcdriver

import (
	"github.com/drover-io/drover/plugins/base/grpcbase"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// Conversions between the SDK's values and their wire messages. A nil
// pointer, a zero time and a nil error travel as unset fields and come back
// as such.

func optInt(n int) *int64 {
	if n == 0 {
		return nil
	}
	v := int64(n)
	return &v
}

func capabilitiesToProto(in *drivers.Capabilities) *proto.Capabilities {
	if in == nil {
		return nil
	}
	out := &proto.Capabilities{SendSignals: in.SendSignals, Exec: in.Exec, FsIsolation: in.FSIsolation}
	if in.MountConfigs == drivers.MountConfigSupportNone {
		out.MountConfigs = proto.MountConfigs_MOUNT_CONFIGS_NONE
	}
	return out
}

func capabilitiesFromProto(in *proto.Capabilities) *drivers.Capabilities {
	if in == nil {
		return &drivers.Capabilities{}
	}
	out := &drivers.Capabilities{SendSignals: in.GetSendSignals(), Exec: in.GetExec(), FSIsolation: in.GetFsIsolation()}
	// An unknown value (a newer plugin's) is read as "all": the client
	// then hands the task its mounts, and the driver refuses what it
	// cannot do.
	if in.GetMountConfigs() == proto.MountConfigs_MOUNT_CONFIGS_NONE {
		out.MountConfigs = drivers.MountConfigSupportNone
	}
	return out
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
		RawConfig:        grpcbase.OptBytes(in.RawConfig),
		NetworkMode:      in.NetworkMode,
	}
	if r := in.Resources; r != nil {
		out.Resources = &proto.Resources{CpuShares: r.CPUShares, MemoryMb: r.MemoryMB, MemoryMaxMb: r.MemoryMaxMB}
	}
	out.Devices, out.Mounts = devicesToProto(in.Devices), mountsToProto(in.Mounts)
	for _, p := range in.Ports {
		out.Ports = append(out.Ports, &proto.PortMapping{Label: p.Label, HostIp: p.HostIP, Value: int32(p.Value), To: int32(p.To)})
	}
	if n := in.NetworkIsolation; n != nil {
		out.NetworkIsolation = &proto.NetworkIsolation{Path: n.Path, Ip: n.IP}
	}
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
		RawConfig:        grpcbase.OptBytes(in.RawConfig),
		NetworkMode:      in.GetNetworkMode(),
	}
	if r := in.GetResources(); r != nil {
		out.Resources = &drivers.Resources{CPUShares: r.GetCpuShares(), MemoryMB: r.GetMemoryMb(), MemoryMaxMB: r.GetMemoryMaxMb()}
	}
	out.Devices, out.Mounts = devicesFromProto(in.GetDevices()), mountsFromProto(in.GetMounts())
	for _, p := range in.GetPorts() {
		out.Ports = append(out.Ports, &drivers.PortMapping{Label: p.GetLabel(), HostIP: p.GetHostIp(), Value: int(p.GetValue()), To: int(p.GetTo())})
	}
	if n := in.GetNetworkIsolation(); n != nil {
		out.NetworkIsolation = &drivers.NetworkIsolationSpec{Path: n.GetPath(), IP: n.GetIp()}
	}
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
		DriverState: grpcbase.OptBytes(in.DriverState),
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
		DriverState: grpcbase.OptBytes(in.DriverState),
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
		Error:     grpcbase.ErrToProto(in.Err),
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
		Err:       grpcbase.ErrFromProto(in.Error),
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
		StartedAt:        grpcbase.TimeToProto(in.StartedAt),
		CompletedAt:      grpcbase.TimeToProto(in.CompletedAt),
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
		StartedAt:        grpcbase.TimeFromProto(in.GetStartedAt()),
		CompletedAt:      grpcbase.TimeFromProto(in.GetCompletedAt()),
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
		Timestamp:   grpcbase.TimeToProto(in.Timestamp),
		Message:     in.Message,
		Annotations: in.Annotations,
		Error:       grpcbase.ErrToProto(in.Err),
	}
}

func taskEventFromProto(in *proto.TaskEvent) *drivers.TaskEvent {
	return &drivers.TaskEvent{
		TaskID:      in.GetTaskId(),
		AllocID:     in.GetAllocId(),
		TaskName:    in.GetTaskName(),
		Timestamp:   grpcbase.TimeFromProto(in.GetTimestamp()),
		Message:     in.GetMessage(),
		Annotations: in.GetAnnotations(),
		Err:         grpcbase.ErrFromProto(in.Error),
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
