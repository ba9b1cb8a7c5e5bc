package replica

import "errors"

var errorsIs = errors.Is

// onEvent applies a bus event on this replica. SECURITY I-93: a
// revocation on any replica closes the device's links, cancels the
// token's calls and drops the checks remembered here too (and a resync,
// events having been missed, drops every remembered check).
func (r *replica) onEvent(e event) {
	r.checks.onEvent(e.Kind, e.ID, e.UserID)
	switch e.Kind {
	case evPairDecided:
		r.pairs.decided(e.ID)
	case evDeviceRevoked:
		r.broker.RevokeBrowser(e.ID)
		if n := r.link.Hub().CloseDevice(e.ID); n > 0 {
			r.log.Info("replica: revoked device's links closed", "device", e.ID, "links", n)
		}
	case evTokenRevoked:
		r.endToken(e.ID, "")
	case evUserDeleted:
		r.endToken("", e.ID)
		for _, dev := range r.homes.devicesOf(e.ID) {
			r.broker.RevokeBrowser(dev)
			r.link.Hub().CloseDevice(dev)
		}
	}
}

// endToken cancels a token's (or a user's) calls running here and ends
// the broker sessions it made here.
func (r *replica) endToken(tokenID, userID string) {
	for _, key := range r.calls.revoke(tokenID, userID) {
		r.broker.EndNamed(key)
	}
}
