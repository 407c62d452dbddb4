package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"winx/auth"
	"winx/evidence"
	evimage "winx/evidence/image"
	"winx/mcp"
	"winx/mcp/session"
)

// ReadImageTool is the image reading tool's name.
const ReadImageTool = "ReadImage"

// ReadImage bounds; the references to images a thread was shown are
// bounded by the session (session.MaxImagesPerThread, MaxImageThreads).
const (
	// maxImageDecodes bounds how many images are read and decoded at
	// once: one holds up to evimage.MaxSourceBytes of source and
	// evimage.MaxDecodeBytes of pixels.
	maxImageDecodes = 2
)

// Error codes of ReadImage, named in its description.
const (
	codeUnsupportedImage  = "unsupported_image"
	codeImageTooLarge     = "image_too_large"
	codeImageNeedsConvert = "image_needs_conversion"
	codeImageDecodeFailed = "image_decode_failed"
)

type readImageTool struct {
	// affinity is the catalog's session affinity (the scope of a reattach).
	affinity   string
	sessions   *session.Sessions
	allowPaths []string
	protected  *auth.Protected
	decodes    chan struct{} // a slot per running read and decode, maxImageDecodes
}

type readImageInput struct {
	FilePath      string `json:"file_path"`
	Force         bool   `json:"force"`
	ThreadID      string `json:"thread_id"`
	WorkspaceRoot string `json:"workspace_root"`
}

// imageData is the data of a ReadImage answer.
type imageData struct {
	Path           string `json:"path"`
	MIMEType       string `json:"mime_type"`
	Width          int    `json:"width"`
	Height         int    `json:"height"`
	SourceWidth    int    `json:"source_width"`
	SourceHeight   int    `json:"source_height"`
	SourceBytes    int64  `json:"source_bytes"`
	DeliveredBytes int    `json:"delivered_bytes"`
	Resized        bool   `json:"resized"`
	Revision       string `json:"revision"`
	// Unchanged is true when no image was sent because this thread was
	// already shown this revision.
	Unchanged bool `json:"unchanged,omitempty"`
}

func addReadImage(reg *mcp.Registry, opts Options) {
	t := &readImageTool{sessions: opts.Sessions, affinity: opts.Affinity, allowPaths: opts.AllowPaths, protected: opts.Protected, decodes: make(chan struct{}, maxImageDecodes)}
	reg.AddTool(mcp.Tool{
		Name:         ReadImageTool,
		Title:        "Read an image",
		Description:  readImageDescription,
		InputSchema:  readImageSchema,
		OutputSchema: mcp.EnvelopeOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:  mcp.Bool(true),
			OpenWorldHint: mcp.Bool(false),
		},
	}, t.handle)
}

const readImageDescription = `Show a workspace image (JPEG, PNG, GIF or WebP, by its bytes) as an image block. Up to 50 MiB; over 2 MiB or 2560 px it is scaled down to JPEG (first GIF frame); a large WebP must be converted first. An image this thread saw unchanged returns a short reference; force=true resends it.
Error codes: unsupported_image, image_too_large, image_needs_conversion, image_decode_failed, file_not_found, file_operation_denied.`

var readImageSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "minLength": 1, "description": "Absolute path, or a path relative to the workspace"},
    "force": {"type": "boolean", "description": "Send the image even if this thread was already shown it unchanged"},
    "thread_id": {"type": "string", "minLength": 1},
    "workspace_root": {"type": "string", "minLength": 1}
  },
  "required": ["file_path", "thread_id", "workspace_root"],
  "additionalProperties": false
}`)

func (t *readImageTool) handle(ctx context.Context, req *mcp.ToolRequest) (*mcp.CallToolResult, error) {
	var in readImageInput
	if err := decodeArguments(req.Arguments, &in); err != nil {
		return toolFailure(ReadImageTool, err), nil
	}
	if in.FilePath == "" {
		return toolFailure(ReadImageTool, &InputError{Msg: "file_path is required"}), nil
	}
	if in.WorkspaceRoot == "" {
		return toolFailure(ReadImageTool, session.ErrWorkspaceBindingRequired), nil
	}
	sess, err := lookupSession(ctx, t.sessions, t.affinity, req.Caller(), in.ThreadID, in.WorkspaceRoot)
	if err != nil {
		return toolFailure(ReadImageTool, err), nil
	}
	return t.show(ctx, req.Caller(), sess, &in), nil
}

// show answers a ReadImage call of caller in sess.
func (t *readImageTool) show(ctx context.Context, caller mcp.Caller, sess *session.Session, in *readImageInput) *mcp.CallToolResult {
	policy, err := filePolicy(caller, sess, t.allowPaths, t.protected)
	if err != nil {
		return toolFailure(ReadImageTool, err)
	}
	canonical, err := policy.Resolve(in.FilePath)
	if err != nil {
		return imageFailure(in.FilePath, err)
	}
	// The slot is taken before the read, not just the decode: a source of
	// up to MaxSourceBytes is held from the read on, so calls queued for a
	// decode must not each hold one.
	select {
	case t.decodes <- struct{}{}:
	case <-ctx.Done():
		return toolFailure(ReadImageTool, ctx.Err())
	}
	defer func() { <-t.decodes }()
	snap, err := readResolved(policy, canonical, evimage.MaxSourceBytes)
	if err != nil {
		return imageFailure(in.FilePath, err)
	}
	// Image references are per thread of the session (session.ImageCache).
	thread := session.ThreadIDOrDefault(in.ThreadID, sess.ExternalID)
	if !in.Force {
		if seen, ok := sess.Images().Lookup(thread, snap.Path, string(snap.Revision)); ok {
			if d, ok := seen.Answer.(imageData); ok {
				return unchangedImage(d)
			}
		}
	}
	d, err := evimage.Prepare(snap.Bytes, nil)
	if err != nil {
		return imageFailure(in.FilePath, err)
	}
	data := imageData{
		Path: snap.Path, MIMEType: d.MIMEType(), Width: d.Width, Height: d.Height,
		SourceWidth: d.Source.Width, SourceHeight: d.Source.Height, SourceBytes: d.Source.Size,
		DeliveredBytes: len(d.Data), Resized: d.Resized, Revision: string(snap.Revision),
	}
	sess.Images().Remember(thread, session.ShownImage{Path: data.Path, Revision: data.Revision, Answer: data})
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: ReadImageTool, Data: data,
		Message: fmt.Sprintf("Image %s, %dx%d %s.", snap.Path, d.Width, d.Height, d.MIMEType())}
	return env.Result(deliveredText(data, d), &mcp.ImageContent{
		Data:     base64.StdEncoding.EncodeToString(d.Data),
		MIMEType: d.MIMEType(),
	})
}

func deliveredText(data imageData, d *evimage.Delivery) string {
	s := fmt.Sprintf("Image %s: %dx%d %s, %d bytes; revision %s", data.Path, data.Width, data.Height, data.MIMEType,
		data.DeliveredBytes, data.Revision)
	switch {
	case d.Resized:
		s += fmt.Sprintf("\nScaled down from %dx%d %s (%d bytes) and re-encoded as JPEG at quality %d.",
			data.SourceWidth, data.SourceHeight, d.Source.Format.MIMEType(), data.SourceBytes, d.Quality)
	case d.Reencoded:
		s += fmt.Sprintf("\nRe-encoded from %s (%d bytes) as JPEG at quality %d to fit the size limit.",
			d.Source.Format.MIMEType(), data.SourceBytes, d.Quality)
	}
	if d.Reencoded && d.Source.Format == evimage.GIF {
		s += " Only the first frame of the GIF is shown."
	}
	return s
}

// unchangedImage is the compact answer for an image this thread was shown
// at the same revision: no bytes, only what identifies it.
func unchangedImage(seen imageData) *mcp.CallToolResult {
	seen.Unchanged, seen.DeliveredBytes = true, 0
	text := fmt.Sprintf("Image %s is unchanged since it was last shown (revision %s, %dx%d %s); no image sent. Pass force=true to send it again.",
		seen.Path, seen.Revision, seen.Width, seen.Height, seen.MIMEType)
	env := mcp.Envelope{Status: mcp.StatusCompleted, Tool: ReadImageTool, Data: seen,
		Message: "The image is unchanged since it was last shown."}
	return env.Result(text)
}

// imageFailure classifies a failure by type, never by text.
func imageFailure(path string, err error) *mcp.CallToolResult {
	env := mcp.Envelope{Tool: ReadImageTool, Status: mcp.StatusInvalidInput, Retryable: true}
	var ie *evimage.Error
	errors.As(err, &ie)
	switch {
	case errors.Is(err, auth.ErrPathProtected):
		env.Status, env.ErrorCode, env.Retryable = mcp.StatusDenied, codeFileOperationDenied, false
		env.Message = fmt.Sprintf("%s is %s.", path, protectedPathText)
	case errors.Is(err, auth.ErrPathDenied):
		env.Status, env.ErrorCode = mcp.StatusDenied, codeFileOperationDenied
		env.Message = fmt.Sprintf("%s is outside the workspace and the allowed paths.", path)
	case errors.Is(err, auth.ErrPathInvalid):
		env.ErrorCode, env.Message = codeInvalidToolInput, err.Error()
	case errors.Is(err, fs.ErrNotExist):
		env.Status, env.ErrorCode = mcp.StatusNotFound, codeFileNotFound
		env.Message = fmt.Sprintf("%s: no such file.", path)
	case errors.Is(err, fs.ErrPermission):
		env.Status, env.ErrorCode = mcp.StatusDenied, codeFileOperationDenied
		env.Message = fmt.Sprintf("%s: permission denied.", path)
	case errors.Is(err, evidence.ErrNotRegular):
		env.ErrorCode, env.Message = codeInvalidToolInput, fmt.Sprintf("%s is not a regular file.", path)
	case errors.Is(err, evidence.ErrTooLarge), errors.Is(err, evimage.ErrSourceTooLarge):
		env.ErrorCode = codeImageTooLarge
		env.Message = fmt.Sprintf("%s is larger than %d MiB, the largest image this server reads; shrink it first.",
			path, evimage.MaxSourceBytes>>20)
	case errors.Is(err, evimage.ErrUnsupported):
		env.ErrorCode = codeUnsupportedImage
		env.Message = fmt.Sprintf("%s is not a JPEG, PNG, GIF or WebP image (judged by its bytes, not its name).", path)
	case errors.Is(err, evimage.ErrDimensionsTooLarge) && ie != nil:
		env.ErrorCode = codeImageTooLarge
		env.Message = fmt.Sprintf("%s claims %dx%d pixels, over this server's decoding bounds (%s; at most %d px per side and %d Mpx); it was not decoded. Shrink it first (for example with a shell tool).",
			path, ie.Width, ie.Height, ie.Detail, evimage.MaxSide, evimage.MaxPixels/1_000_000)
	case errors.Is(err, evimage.ErrWebPReencode) && ie != nil:
		env.ErrorCode = codeImageNeedsConvert
		env.Message = fmt.Sprintf("%s is a %dx%d WebP of %d bytes, over the delivery limits (%d MiB, %d px), and WebP cannot be re-encoded by this server; convert it to PNG or JPEG first (for example with a shell tool) and read that.",
			path, ie.Width, ie.Height, ie.Size, evimage.MaxDeliveredBytes>>20, evimage.MaxLongEdge)
	case errors.Is(err, evimage.ErrDecode):
		env.ErrorCode = codeImageDecodeFailed
		env.Message = fmt.Sprintf("%s could not be decoded: %v.", path, err)
	default:
		env.Status, env.ErrorCode = mcp.StatusFailed, codeExecutionFailed
		env.Message = fmt.Sprintf("%s could not be read as an image.", path)
	}
	return env.Result(env.Message)
}
