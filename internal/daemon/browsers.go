package daemon

import (
	"errors"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/launcher"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/wire"
)

// BrowserStatus is one paired browser in `status`: whether it is connected
// right now (a live authenticated link), whether its tool server serves
// agents, and which live sessions act in it.
type BrowserStatus struct {
	DeviceID  string    `json:"deviceId"`
	Name      string    `json:"name"`
	Connected bool      `json:"connected"`
	Serving   bool      `json:"serving"`
	LastUsed  time.Time `json:"lastUsed,omitzero"`
	// Default marks the browser a new session without --browser acts in.
	Default  bool             `json:"default"`
	Sessions []BrowserSession `json:"sessions"`
}

// BrowserSession is a live session as the browsers section names it.
type BrowserSession struct {
	ID      string         `json:"id"`
	Label   string         `json:"label"`
	Kind    broker.Kind    `json:"kind"`
	Binding broker.Binding `json:"binding"`
}

// DevicesRenameParams is `devices.rename`: the device by ID or current name.
type DevicesRenameParams struct {
	Device string `json:"device"`
	Name   string `json:"name"`
}

// browsersStatus lists every paired browser, connected ones first in the
// order the broker would pick them.
func (d *daemon) browsersStatus() []BrowserStatus {
	live := d.link.Hub().ConnectedDevices()
	serving := d.broker.Browsers()
	sessions := map[string]broker.SessionInfo{}
	for _, s := range d.broker.Sessions() {
		sessions[s.ID] = s
	}
	out := []BrowserStatus{}
	byID := map[string]int{}
	for i, bw := range serving {
		st := BrowserStatus{DeviceID: bw.DeviceID, Name: bw.Name, Connected: live[bw.DeviceID], Serving: true,
			LastUsed: bw.LastUsed, Default: i == 0, Sessions: []BrowserSession{}}
		for _, id := range bw.Sessions {
			if s, ok := sessions[id]; ok {
				st.Sessions = append(st.Sessions, BrowserSession{ID: s.ID, Label: s.Label, Kind: s.Kind, Binding: s.Binding})
			}
		}
		byID[bw.DeviceID] = len(out)
		out = append(out, st)
	}
	for _, dev := range d.devices.List() {
		if i, ok := byID[dev.ID]; ok {
			out[i].Name = dev.Name
			continue
		}
		out = append(out, BrowserStatus{DeviceID: dev.ID, Name: dev.Name, Connected: live[dev.ID], Sessions: []BrowserSession{}})
	}
	return out
}

// resolveBrowser maps a --browser name or device ID to a paired device.
func (d *daemon) resolveBrowser(nameOrID string) (string, string, bool) {
	dev, ok := d.devices.Find(strings.TrimSpace(nameOrID))
	return dev.ID, dev.Name, ok
}

func (d *daemon) renameDevice(p DevicesRenameParams) (DeviceInfo, error) {
	dev, ok := d.devices.Find(p.Device)
	if !ok {
		return DeviceInfo{}, wire.Errorf(wire.CodeInvalidParams, "devices.rename: no device %q; see `torii devices`", p.Device)
	}
	dev, err := d.devices.Rename(dev.ID, p.Name)
	switch {
	case errors.Is(err, pairing.ErrNameTaken):
		return DeviceInfo{}, wire.Errorf(wire.CodeInvalidParams, "devices.rename: another device is already named %q; pick another name", p.Name)
	case errors.Is(err, pairing.ErrBadDeviceName):
		return DeviceInfo{}, wire.Errorf(wire.CodeInvalidParams, "devices.rename: a name is 1-%d printable characters", pairing.MaxDeviceName)
	case err != nil:
		return DeviceInfo{}, err
	}
	d.broker.RenameBrowser(dev.ID, dev.Name)
	d.log.Info("device renamed", "device", dev.ID, "name", dev.Name)
	return DeviceInfo{DeviceID: dev.ID, Name: dev.Name, Origin: dev.Origin, CreatedAt: dev.CreatedAt, LastSeen: dev.LastSeen,
		Connected: d.link.Hub().ConnectedDevices()[dev.ID]}, nil
}

// managedBrowser reports whether `torii launch` started the browser paired
// as deviceID (any browser, for "") and still lists it: the records stay
// until `torii stop`, so a managed browser that closed or crashed is still
// told apart from the person's own.
func managedBrowser(stateDir, deviceID string) bool {
	rs, _ := launcher.LoadRecords(stateDir)
	for _, r := range rs {
		if deviceID == "" || r.DeviceID == deviceID {
			return true
		}
	}
	return false
}
