package daemon

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/files"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

// Link methods by which the paired extension files bytes for an agent
// session in the download sandbox (internal/files) and finds the files
// `upload` may set. Each names the session; the daemon accepts it only
// for a live session acting in that very browser (SECURITY I-66).
const (
	// FilesPut writes {sessionId, name, mimeType, data (base64) | text} as
	// a new file; the result is the resource_link content block.
	FilesPut = "torii/files/put"
	// FilesAdopt moves {sessionId, path, name} — a download the person
	// allowed, saved by the browser into torii/<session folder>/ of its
	// download folder — into the sandbox; the result is the resource_link.
	FilesAdopt = "torii/files/adopt"
	// FilesPath resolves {sessionId, names} to absolute paths of the
	// session's own files, for upload: {paths}.
	FilesPath = "torii/files/path"
)

// MaxReadBytes is the largest file resources/read returns: its base64
// stays well under the MCP socket's 32 MiB message (SECURITY I-54).
const MaxReadBytes = 16 << 20

// maxPutBytes bounds one put to one chunk's worth: a larger file comes
// through FilesBegin (filetransfer.go).
const maxPutBytes = files.ChunkMax

type resourceLink struct {
	Type     string `json:"type"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

func linkOf(e files.Entry) resourceLink {
	return resourceLink{Type: "resource_link", URI: e.URI, Name: e.Name, MIMEType: e.MIMEType, Size: e.Size}
}

// fileError is a refusal the extension turns into a tool error with this code.
func fileError(code toolerr.Code, format string, args ...any) *wire.Error {
	return &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf(format, args...), Data: map[string]string{"toolCode": string(code)}}
}

// fileSession is the session a file request from c is for.
func (d *daemon) fileSession(c *link.Conn, id string) (*broker.Session, *wire.Error) {
	i := c.Info()
	if i.Kind != link.KindDevice {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "only a paired browser files bytes for a session")
	}
	s := d.broker.FileSession(id, i.DeviceID)
	if s == nil {
		return nil, fileError(toolerr.InvalidArgument, "no live agent session %q acts in this browser; nothing was saved", clipID(id))
	}
	return s, nil
}

func clipID(id string) string {
	if len(id) > 80 {
		return id[:80]
	}
	return id
}

func (d *daemon) handleFiles(c *link.Conn, method string, params json.RawMessage) (any, error) {
	switch method {
	case FilesPut:
		var p struct {
			SessionID string  `json:"sessionId"`
			Name      string  `json:"name"`
			MIMEType  string  `json:"mimeType"`
			Data      []byte  `json:"data"`
			Text      *string `json:"text"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params", FilesPut)
		}
		s, e := d.fileSession(c, p.SessionID)
		if e != nil {
			return nil, e
		}
		data := p.Data
		if p.Text != nil {
			data = []byte(*p.Text)
		}
		if len(data) > maxPutBytes {
			return nil, fileError(toolerr.TooLarge, "the file is %d bytes, over the %d one put takes; send it in chunks (%s)", len(data), maxPutBytes, FilesBegin)
		}
		ent, err := d.files.Put(s.FilesFolder(), p.Name, p.MIMEType, data)
		if err != nil {
			return nil, d.putError(err)
		}
		return linkOf(ent), nil
	case FilesAdopt:
		var p struct {
			SessionID string `json:"sessionId"`
			Path      string `json:"path"`
			Name      string `json:"name"`
		}
		if json.Unmarshal(params, &p) != nil {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params", FilesAdopt)
		}
		s, e := d.fileSession(c, p.SessionID)
		if e != nil {
			return nil, e
		}
		ent, err := d.files.Adopt(s.FilesFolder(), p.Path, p.Name)
		if err != nil {
			return nil, d.putError(err)
		}
		return linkOf(ent), nil
	case FilesPath:
		var p struct {
			SessionID string   `json:"sessionId"`
			Names     []string `json:"names"`
		}
		if json.Unmarshal(params, &p) != nil || len(p.Names) == 0 || len(p.Names) > 32 {
			return nil, fileError(toolerr.InvalidArgument, "%s: bad params", FilesPath)
		}
		s, e := d.fileSession(c, p.SessionID)
		if e != nil {
			return nil, e
		}
		paths := make([]string, 0, len(p.Names))
		for _, n := range p.Names {
			if err := files.ValidName(n); err != nil {
				return nil, fileError(toolerr.InvalidArgument, "files: %v", err)
			}
			path, _, err := d.files.Path(s.FilesFolder(), n)
			if err != nil {
				return nil, fileError(toolerr.NotFound, "files: %q is not a file of this session's sandbox; save it there first (save_to_file) or list them (resources/list)", n)
			}
			paths = append(paths, path)
		}
		return map[string]any{"paths": paths}, nil
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "%s", method)
}

func (d *daemon) putError(err error) *wire.Error {
	switch {
	case errors.Is(err, files.ErrName):
		return fileError(toolerr.InvalidArgument, "name: %v", err)
	case errors.Is(err, files.ErrFull):
		return fileError(toolerr.TooLarge, "%v (%d files); start a new session to save more", err, files.MaxFiles)
	case errors.Is(err, files.ErrNotFound):
		return fileError(toolerr.NotFound, "%v", err)
	}
	d.log.Warn("files: write failed", "err", err)
	return fileError(toolerr.Internal, "the daemon could not write the file: %v", err)
}
