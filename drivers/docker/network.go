package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"

	"github.com/drover-io/drover/plugins/drivers"
)

// A bridge or CNI group with a docker task gets its network namespace
// from an infra container ("pause" container, as Nomad's): the driver
// creates it in Docker's network mode "none" from the plugin's
// infra_image, the client wires its namespace (/proc/<pid>/ns/net) with
// CNI, and the group's containers join it with network_mode
// "container:<id>"; exec and raw_exec tasks of the group enter the same
// namespace through the client's bind mount of it. The container is
// named "drover-pause-<alloc id>" and labelled with the alloc ID and
// labelInfra, so that a restarted agent finds it again and removes those of
// allocations it no longer runs.

var _ drivers.DriverNetworkManager = (*Driver)(nil)

const (
	// labelInfra marks the driver's infra containers; labelNodeID holds
	// the ID of the node that asked for one.
	labelInfra  = "io.drover.infra"
	labelNodeID = "io.drover.node_id"
	// infraNamePrefix starts an infra container's name; the alloc ID ends it.
	infraNamePrefix = "drover-pause-"
	// infraStopTimeout bounds removing an infra container.
	infraStopTimeout = 30 * time.Second
)

// infraName is the name of the allocation's infra container.
func infraName(allocID string) string { return infraNamePrefix + allocID }

// CreateNetwork starts the allocation's infra container, or finds the
// running one (an agent restart), and returns its network namespace. The
// group's hostname and dns block become the container's, which the
// containers that join its network share (Docker gives them its hostname
// and resolv.conf).
func (d *Driver) CreateNetwork(ctx context.Context, req *drivers.CreateNetworkRequest) (*drivers.NetworkIsolationSpec, error) {
	if req == nil || req.AllocID == "" || strings.ContainsAny(req.AllocID, "/ ") {
		return nil, errors.New("create network: a valid alloc ID is required")
	}
	name := infraName(req.AllocID)
	info, err := d.client.inspectContainer(ctx, name)
	switch {
	case err == nil && info.State.Running && info.State.Pid > 0:
		d.logger.Debug("kept the allocation's infra container", "alloc_id", req.AllocID, "container_id", shortID(info.ID))
		return infraSpec(info), nil
	case err == nil:
		// Stopped (the host rebooted, someone killed it): its namespace is
		// gone, a new one is made and wired.
		d.logger.Info("replacing the allocation's stopped infra container", "alloc_id", req.AllocID, "container_id", shortID(info.ID))
		if err := d.client.removeContainer(ctx, info.ID, true); err != nil {
			return nil, fmt.Errorf("create network: remove stopped infra container %s: %w", name, err)
		}
	case !isNotFound(err):
		return nil, fmt.Errorf("create network: inspect infra container %s: %w", name, err)
	}
	image, err := d.infraImage(ctx)
	if err != nil {
		return nil, fmt.Errorf("create network: infra_image: %w", err)
	}
	spec, err := infraContainerSpec(image, req)
	if err != nil {
		return nil, fmt.Errorf("create network: %w", err)
	}
	id, err := d.client.createContainer(ctx, name, spec)
	if err != nil {
		return nil, fmt.Errorf("create network: create infra container %s: %w", name, err)
	}
	if err := d.client.startContainer(ctx, id); err == nil {
		info, err = d.client.inspectContainer(ctx, id)
		if err == nil && (!info.State.Running || info.State.Pid <= 0) {
			err = fmt.Errorf("it is not running (%s, exit code %d)", info.State.Status, info.State.ExitCode)
		}
	}
	if err != nil {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), infraStopTimeout)
		defer cancel()
		_ = d.client.removeContainer(rmCtx, id, true)
		return nil, fmt.Errorf("create network: start infra container %s from image %q: %w", name, image, err)
	}
	d.logger.Info("started the allocation's infra container", "alloc_id", req.AllocID, "container_id", shortID(id), "image", image)
	return infraSpec(info), nil
}

// infraContainerSpec is the infra container of req, from image: Docker's
// network mode "none" (a namespace with loopback only, which CNI wires),
// the group's hostname and DNS, a small memory limit.
func infraContainerSpec(image string, req *drivers.CreateNetworkRequest) (*containerCreate, error) {
	cc := &containerCreate{
		Config: &container.Config{
			Image:    image,
			Hostname: req.Hostname,
			Labels: map[string]string{
				labelInfra:        "true",
				LabelAllocID:      req.AllocID,
				labelNomadAllocID: req.AllocID,
				labelNodeID:       req.NodeID,
			},
		},
		HostConfig: &container.HostConfig{NetworkMode: "none"},
	}
	if req.DNS != nil {
		hc := cc.HostConfig
		for _, s := range req.DNS.Servers {
			addr, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("network dns servers: %q is not an IP address", s)
			}
			hc.DNS = append(hc.DNS, addr)
		}
		hc.DNSSearch = req.DNS.Searches
		hc.DNSOptions = req.DNS.Options
	}
	return cc, nil
}

// infraSpec is the namespace of a running infra container.
func infraSpec(info *container.InspectResponse) *drivers.NetworkIsolationSpec {
	return &drivers.NetworkIsolationSpec{
		Path:     fmt.Sprintf("/proc/%d/ns/net", info.State.Pid),
		Labels:   map[string]string{drivers.NetworkLabelSandboxContainer: info.ID},
		Hostname: info.Config.Hostname,
	}
}

// DestroyNetwork removes the allocation's infra container (killing it):
// its namespace lives on as long as the client's bind mount of it does.
func (d *Driver) DestroyNetwork(ctx context.Context, allocID string) error {
	if allocID == "" || strings.ContainsAny(allocID, "/ ") {
		return errors.New("destroy network: a valid alloc ID is required")
	}
	ctx, cancel := context.WithTimeout(ctx, infraStopTimeout)
	defer cancel()
	if err := d.client.removeContainer(ctx, infraName(allocID), true); err != nil {
		return fmt.Errorf("destroy network: remove infra container %s: %w", infraName(allocID), err)
	}
	d.logger.Info("removed the allocation's infra container", "alloc_id", allocID)
	return nil
}

// Networks lists the allocations of node nodeID that have an infra
// container.
func (d *Driver) Networks(ctx context.Context, nodeID string) ([]string, error) {
	cs, err := d.client.listContainers(ctx, labelInfra+"=true")
	if err != nil {
		return nil, fmt.Errorf("list infra containers: %w", err)
	}
	var ids []string
	for _, c := range cs {
		if id := c.Labels[LabelAllocID]; id != "" && c.Labels[labelNodeID] == nodeID {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// infraImage makes the infra image present and returns its reference:
// the plugin's infra_image when the daemon has it or can pull it (within
// infra_image_pull_timeout). When infra_image is the default (Nomad's
// registry.k8s.io/pause, rarely reachable where drover runs without a
// registry), the local infra image replaces it: used when present, else
// imported (pauseimage.go) once the pull fails. Concurrent callers wait
// for one another (infraSem), so the image is imported once.
func (d *Driver) infraImage(ctx context.Context) (string, error) {
	select {
	case d.infraSem <- struct{}{}:
		defer func() { <-d.infraSem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	ref := normalizeImage(d.config.InfraImage)
	ok, err := d.client.imageExists(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("look up image %q: %w", ref, err)
	}
	if ok {
		return ref, nil
	}
	local := localInfraImage()
	fallback := d.config.InfraImage == defaultInfraImage() && local != ""
	if fallback {
		if ok, err := d.client.imageExists(ctx, local); err == nil && ok {
			return local, nil
		}
	}
	perr := d.pullInfra(ctx, ref)
	if perr == nil {
		return ref, nil
	}
	if !fallback || ctx.Err() != nil {
		return "", fmt.Errorf("image %q not found locally and could not be pulled: %w", ref, perr)
	}
	d.logger.Warn("cannot pull the default infra_image; importing the driver's own pause image instead", "infra_image", ref, "image", local, "error", perr)
	if err := d.importLocalInfra(ctx); err != nil {
		return "", fmt.Errorf("image %q could not be pulled (%v), and importing %q failed: %w", ref, perr, local, err)
	}
	return local, nil
}

// pullInfra pulls the infra image with the plugin's credentials, bounded
// by infra_image_pull_timeout and pull_activity_timeout.
func (d *Driver) pullInfra(ctx context.Context, ref string) error {
	auth, err := d.auth.resolve(ctx, ref, TaskAuthConfig{})
	if err != nil {
		d.logger.Warn("cannot find registry credentials for infra_image; pulling without them", "image", ref, "error", err)
		auth = nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(d.config.InfraImagePullTimeout))
	defer cancel()
	body, err := d.client.pullImage(ctx, ref, auth)
	if err != nil {
		return err
	}
	return watchProgress(body, d.config.pullActivityTimeout())
}

// importLocalInfra imports the local infra image.
func (d *Driver) importLocalInfra(ctx context.Context) error {
	rootfs, err := pauseRootfs(runtime.GOARCH)
	if err != nil {
		return err
	}
	body, err := d.client.importImage(ctx, localInfraRepo, localInfraTag(), bytes.NewReader(rootfs), []string{`CMD ["` + localInfraPath + `"]`})
	if err != nil {
		return err
	}
	defer body.Close()
	return readProgress(body, nil)
}
