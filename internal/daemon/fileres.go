package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	sdkrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/files"
	"github.com/torii-browser/torii/internal/toolerr"
)

// filesMiddleware answers resources/list and resources/read from the
// calling session's own folder: another session's file, a missing one and
// a link are the same "not found", naming nothing (SECURITY I-66).
// sessionOf names the broker session behind an MCP session: the daemon's
// own server maps each of its sessions; a chat session's server (gateway)
// has one.
func (d *daemon) filesMiddleware(sessionOf func(*mcp.ServerSession) *broker.Session) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "resources/list":
				r, _ := req.(*mcp.ListResourcesRequest)
				out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
				if r == nil {
					return out, nil
				}
				if s := sessionOf(r.Session); s != nil {
					for _, e := range d.files.List(s.FilesFolder()) {
						out.Resources = append(out.Resources, &mcp.Resource{URI: e.URI, Name: e.Name, MIMEType: e.MIMEType, Size: e.Size})
					}
				}
				return out, nil
			case "resources/read":
				r, _ := req.(*mcp.ReadResourceRequest)
				if r == nil || r.Params == nil {
					return nil, notFound("")
				}
				return d.readFile(sessionOf(r.Session), r.Params.URI)
			}
			return next(ctx, method, req)
		}
	}
}

func (d *daemon) readFile(s *broker.Session, uri string) (*mcp.ReadResourceResult, error) {
	folder, name, ok := files.ParseURI(uri)
	if !ok || s == nil || folder != s.FilesFolder() {
		return nil, notFound(uri)
	}
	b, e, err := d.files.Read(folder, name, MaxReadBytes)
	var big *files.TooLargeError
	if errors.As(err, &big) {
		return nil, &sdkrpc.Error{Code: sdkrpc.CodeInvalidParams, Message: fmt.Sprintf("too_large: %s is %d bytes, over the %d resources/read returns; it stays in the session's download sandbox folder (%s) for the person to open", name, big.Size, big.Max, folder),
			Data: json.RawMessage(`{"toolCode":"too_large"}`)}
	}
	if err != nil {
		return nil, notFound(uri)
	}
	c := &mcp.ResourceContents{URI: e.URI, MIMEType: e.MIMEType}
	if files.IsText(e.MIMEType) && utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Blob = b
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// notFound is the one answer for every file a session may not read.
func notFound(uri string) error {
	if len(uri) > 200 {
		uri = uri[:200]
	}
	data, _ := json.Marshal(map[string]string{"uri": uri, "toolCode": string(toolerr.NotFound)})
	return &sdkrpc.Error{Code: mcp.CodeResourceNotFound, Message: "not_found: this session has no file at that URI; resources/list shows the files it saved", Data: data}
}
