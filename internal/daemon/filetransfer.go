package daemon

import (
	"encoding/json"
	"errors"

	"github.com/torii-browser/torii/internal/files"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

// Link methods by which the paired extension sends a file of any size in
// bounded chunks (internal/files transfer.go), so no request has to fit
// the link's 1 MiB request cap. A transfer belongs to the link that began
// it and ends with it (SECURITY I-81).
const (
	// FilesBegin {sessionId, name, mimeType, size?} → {id, chunkMax}.
	FilesBegin = "torii/files/begin"
	// FilesChunk {id, offset, data (base64, at most chunkMax bytes)} → {received}.
	FilesChunk = "torii/files/chunk"
	// FilesCommit {sessionId, id, size} → the resource_link of the new file.
	FilesCommit = "torii/files/commit"
	// FilesCancel {id} → {}: the partial file is removed.
	FilesCancel = "torii/files/cancel"
)

func (d *daemon) handleTransfer(c *link.Conn, method string, params json.RawMessage) (any, error) {
	owner := c.ID()
	switch method {
	case FilesBegin:
		var p struct {
			SessionID string `json:"sessionId"`
			Name      string `json:"name"`
			MIMEType  string `json:"mimeType"`
			Size      *int64 `json:"size"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params", FilesBegin)
		}
		s, e := d.fileSession(c, p.SessionID)
		if e != nil {
			return nil, e
		}
		size := int64(-1)
		if p.Size != nil {
			size = *p.Size
		}
		id, err := d.xfers.Begin(owner, s.FilesFolder(), p.Name, p.MIMEType, size)
		if err != nil {
			return nil, d.transferError(err)
		}
		return map[string]any{"id": id, "chunkMax": files.ChunkMax}, nil
	case FilesChunk:
		var p struct {
			ID     string `json:"id"`
			Offset int64  `json:"offset"`
			Data   []byte `json:"data"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params (data must be base64)", FilesChunk)
		}
		n, err := d.xfers.Chunk(owner, p.ID, p.Offset, p.Data)
		if err != nil {
			return nil, d.transferError(err)
		}
		return map[string]int64{"received": n}, nil
	case FilesCommit:
		var p struct {
			SessionID string `json:"sessionId"`
			ID        string `json:"id"`
			Size      int64  `json:"size"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params", FilesCommit)
		}
		// The session must still be live when the file appears in its folder.
		s, e := d.fileSession(c, p.SessionID)
		if e != nil {
			_ = d.xfers.Cancel(owner, p.ID)
			return nil, e
		}
		ent, err := d.xfers.Commit(owner, p.ID, s.FilesFolder(), p.Size)
		if err != nil {
			return nil, d.transferError(err)
		}
		return linkOf(ent), nil
	case FilesCancel:
		var p struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params", FilesCancel)
		}
		if err := d.xfers.Cancel(owner, p.ID); err != nil {
			return nil, d.transferError(err)
		}
		return map[string]any{}, nil
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "%s", method)
}

func (d *daemon) transferError(err error) *wire.Error {
	switch {
	case errors.Is(err, files.ErrTransferTooLarge):
		return fileError(toolerr.TooLarge, "%v", err)
	case errors.Is(err, files.ErrTransferBusy):
		return fileError(toolerr.Busy, "%v", err)
	case errors.Is(err, files.ErrNoTransfer), errors.Is(err, files.ErrOutOfOrder), errors.Is(err, files.ErrSizeMismatch):
		return fileError(toolerr.InvalidArgument, "%v", err)
	}
	return d.putError(err)
}
