package wire

import (
	"errors"
	"reflect"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// Marshal encodes v: an abi document the guest sends (export outputs and
// host-call requests), or any JSON-shaped value.
func Marshal(v any) ([]byte, error) {
	e := &encoder{b: make([]byte, 0, 512)}
	switch v := v.(type) {
	case abi.PluginInfo:
		e.pluginInfo(v)
	case abi.ValidateResponse:
		e.validateResponse(v)
	case abi.ValidateBatchResponse:
		o := e.object()
		o.key("results")
		e.list(len(v.Results), v.Results == nil, func(i int) { e.validateResponse(v.Results[i]) })
		o.end()
	case abi.StatusResponse:
		o := e.object()
		o.strOmit("provider", v.Provider)
		o.strOmit("final_ensure", v.FinalEnsure)
		o.anyMap("state", v.State)
		o.strOmit("error", v.Error)
		o.end()
	case abi.Result:
		e.result(v)
	case abi.BatchResponse:
		o := e.object()
		o.key("results")
		e.list(len(v.Results), v.Results == nil, func(i int) { e.result(v.Results[i]) })
		o.end()
	case abi.FSStatRequest:
		o := e.object()
		o.str("path", v.Path)
		o.boolOmit("follow_symlinks", v.FollowSymlinks)
		o.boolOmit("checksum", v.Checksum)
		o.end()
	case abi.FSReadRequest:
		o := e.object()
		o.str("path", v.Path)
		o.intOmit("max_bytes", v.MaxBytes)
		o.end()
	case abi.FSWriteRequest:
		o := e.object()
		o.str("path", v.Path)
		o.bytesOmit("content", v.Content)
		o.strOmit("source", v.Source)
		o.int("mode", int64(v.Mode))
		o.strOmit("owner", v.Owner)
		o.strOmit("group", v.Group)
		o.end()
	case abi.FSMkdirRequest:
		o := e.object()
		o.str("path", v.Path)
		o.int("mode", int64(v.Mode))
		o.strOmit("owner", v.Owner)
		o.strOmit("group", v.Group)
		o.boolOmit("parents", v.Parents)
		o.end()
	case abi.FSRemoveRequest:
		o := e.object()
		o.str("path", v.Path)
		o.boolOmit("recursive", v.Recursive)
		o.end()
	case abi.FSChownRequest:
		o := e.object()
		o.str("path", v.Path)
		o.strOmit("owner", v.Owner)
		o.strOmit("group", v.Group)
		o.end()
	case abi.FSChmodRequest:
		o := e.object()
		o.str("path", v.Path)
		o.int("mode", int64(v.Mode))
		o.end()
	case abi.FSListRequest:
		o := e.object()
		o.str("path", v.Path)
		o.end()
	case abi.ExecRequest:
		o := e.object()
		o.strsOmit("argv", v.Argv)
		o.strOmit("command", v.Command)
		o.boolOmit("shell", v.Shell)
		o.strsOmit("env", v.Env)
		o.strOmit("cwd", v.Cwd)
		o.intOmit("timeout_ms", v.TimeoutMS)
		o.bytesOmit("stdin", v.Stdin)
		o.intOmit("max_output", v.MaxOutput)
		o.boolOmit("probe", v.Probe)
		o.end()
	case abi.UserLookupRequest:
		o := e.object()
		o.strOmit("name", v.Name)
		o.strOmit("id", v.ID)
		o.end()
	case abi.GroupLookupRequest:
		o := e.object()
		o.strOmit("name", v.Name)
		o.strOmit("id", v.ID)
		o.end()
	case abi.LookupRequest:
		o := e.object()
		o.str("path", v.Path)
		o.end()
	case abi.LogRequest:
		o := e.object()
		o.str("level", v.Level)
		o.str("message", v.Message)
		o.end()
	default:
		e.value(v)
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

// list writes n elements with elem, or null for a nil slice.
func (e *encoder) list(n int, isNil bool, elem func(i int)) {
	if isNil {
		e.null()
		return
	}
	e.b = append(e.b, '[')
	for i := range n {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		elem(i)
	}
	e.b = append(e.b, ']')
}

func (e *encoder) pluginInfo(v abi.PluginInfo) {
	o := e.object()
	o.int("abi", int64(v.ABI))
	o.str("type", v.Type)
	o.str("version", v.Version)
	o.strs("providers", v.Providers)
	o.strs("ensure", v.Ensure)
	o.strOmit("default_ensure", v.DefaultEnsure)
	o.bool("refresh", v.Refresh)
	o.boolOmit("batch", v.Batch)
	o.strOmit("lock", v.Lock)
	o.strsOmit("deferred", v.Deferred)
	o.strsOmit("guards", v.Guards)
	o.rawOmit("properties_schema", v.PropertiesSchema)
	c := v.Capabilities
	co := o.key("capabilities").object()
	co.strsOmit("fs_read", c.FSRead)
	co.strsOmit("fs_write", c.FSWrite)
	co.strsOmit("exec", c.Exec)
	co.strsOmit("net", c.Net)
	co.boolOmit("users", c.Users)
	co.boolOmit("setid", c.Setid)
	co.strsOmit("probe_exec", c.ProbeExec)
	co.strsOmit("env", c.Env)
	co.end()
	o.end()
}

func (e *encoder) validateResponse(v abi.ValidateResponse) {
	o := e.object()
	o.strs("errors", v.Errors)
	o.end()
}

func (e *encoder) result(v abi.Result) {
	o := e.object()
	o.bool("changed", v.Changed)
	o.boolOmit("refreshed", v.Refreshed)
	o.strOmit("provider", v.Provider)
	o.strOmit("final_ensure", v.FinalEnsure)
	o.strOmit("noop_message", v.NoopMessage)
	o.anyMapOmit("state", v.State)
	o.strsOmit("messages", v.Messages)
	o.strOmit("diff", v.Diff)
	o.strOmit("error", v.Error)
	o.intOmit("duration_ns", v.DurationNS)
	o.end()
}

// Unmarshal decodes data into v: a pointer to an abi document the guest
// receives (export inputs and host-call responses), or *any.
func Unmarshal(data []byte, v any) error {
	d := &decoder{data: data}
	err := d.value(v)
	if err == nil {
		err = d.end()
	}
	return err
}

// UnmarshalResponse decodes a host call's abi.Response document in one pass:
// the value of "ok" straight into ok (a pointer Unmarshal accepts; nil skips
// it), "error" into the returned CallError. Unmarshal into an abi.Response
// keeps "ok" raw, which a second Unmarshal then reads again; in a guest every
// byte read costs, so the SDK's host calls use this.
//
// The host writes either "ok" or "error". Given both, the CallError is
// returned and ok holds what "ok" decoded to.
func UnmarshalResponse(data []byte, ok any) (*abi.CallError, error) {
	d := &decoder{data: data}
	var callErr *abi.CallError
	err := d.object("abi.Response", func(k string) error {
		switch k {
		case "ok":
			if ok == nil {
				return d.skip()
			}
			return d.value(ok)
		case "error":
			if isNull, err := d.null(); isNull || err != nil {
				callErr = nil
				return err
			}
			if callErr == nil {
				callErr = &abi.CallError{}
			}
			return d.callError(callErr)
		}
		return d.skip()
	})
	if err == nil {
		err = d.end()
	}
	if err != nil {
		return nil, err
	}
	return callErr, nil
}

func (d *decoder) callError(v *abi.CallError) error {
	return d.object("abi.CallError", func(k string) error {
		switch k {
		case "code":
			return d.string(&v.Code)
		case "message":
			return d.string(&v.Message)
		}
		return d.skip()
	})
}

// value decodes the value at the decoder's position into v (see Unmarshal).
func (d *decoder) value(v any) error {
	var err error
	switch v := v.(type) {
	case *abi.ValidateRequest:
		err = d.validateRequest(v)
	case *abi.ValidateBatchRequest:
		err = d.object("abi.ValidateBatchRequest", func(k string) error {
			if k != "requests" {
				return d.skip()
			}
			var out []abi.ValidateRequest
			isNull, err := d.array("[]abi.ValidateRequest", func() error {
				var r abi.ValidateRequest
				err := d.validateRequest(&r)
				out = append(out, r)
				return err
			})
			setSlice(&v.Requests, out, isNull)
			return err
		})
	case *abi.Request:
		err = d.request(v)
	case *abi.BatchRequest:
		err = d.object("abi.BatchRequest", func(k string) error {
			switch k {
			case "requests":
				var out []abi.Request
				isNull, err := d.array("[]abi.Request", func() error {
					var r abi.Request
					err := d.request(&r)
					out = append(out, r)
					return err
				})
				setSlice(&v.Requests, out, isNull)
				return err
			case "stop_on_failure":
				return d.bool(&v.StopOnFailure)
			}
			return d.skip()
		})
	case *abi.Response:
		err = d.object("abi.Response", func(k string) error {
			switch k {
			case "ok":
				raw, err := d.raw()
				v.Ok = raw
				return err
			case "error":
				if isNull, err := d.null(); isNull || err != nil {
					v.Error = nil
					return err
				}
				if v.Error == nil {
					v.Error = &abi.CallError{}
				}
				return d.callError(v.Error)
			}
			return d.skip()
		})
	case *abi.FSStatResponse:
		err = d.object("abi.FSStatResponse", func(k string) error {
			switch k {
			case "exists":
				return d.bool(&v.Exists)
			case "type":
				return d.string(&v.Type)
			case "mode":
				return d.uint32Field(&v.Mode)
			case "uid":
				return d.intField(&v.UID)
			case "gid":
				return d.intField(&v.GID)
			case "owner":
				return d.string(&v.Owner)
			case "group":
				return d.string(&v.Group)
			case "size":
				return d.int64Field(&v.Size)
			case "mtime":
				return d.int64Field(&v.MTime)
			case "sha256":
				return d.string(&v.SHA256)
			case "link_target":
				return d.string(&v.LinkTarget)
			}
			return d.skip()
		})
	case *abi.FSReadResponse:
		err = d.object("abi.FSReadResponse", func(k string) error {
			if k == "content" {
				return d.bytes(&v.Content)
			}
			return d.skip()
		})
	case *abi.FSListResponse:
		err = d.object("abi.FSListResponse", func(k string) error {
			if k != "entries" {
				return d.skip()
			}
			var out []abi.DirEntry
			isNull, err := d.array("[]abi.DirEntry", func() error {
				var de abi.DirEntry
				err := d.object("abi.DirEntry", func(k string) error {
					switch k {
					case "name":
						return d.string(&de.Name)
					case "type":
						return d.string(&de.Type)
					}
					return d.skip()
				})
				out = append(out, de)
				return err
			})
			setSlice(&v.Entries, out, isNull)
			return err
		})
	case *abi.ExecResponse:
		err = d.object("abi.ExecResponse", func(k string) error {
			switch k {
			case "exit_code":
				return d.intField(&v.ExitCode)
			case "stdout":
				return d.string(&v.Stdout)
			case "stderr":
				return d.string(&v.Stderr)
			case "timed_out":
				return d.bool(&v.TimedOut)
			case "truncated":
				return d.bool(&v.Truncated)
			}
			return d.skip()
		})
	case *abi.UserLookupResponse:
		err = d.object("abi.UserLookupResponse", func(k string) error {
			switch k {
			case "name":
				return d.string(&v.Name)
			case "uid":
				return d.intField(&v.UID)
			case "gid":
				return d.intField(&v.GID)
			case "home":
				return d.string(&v.Home)
			}
			return d.skip()
		})
	case *abi.GroupLookupResponse:
		err = d.object("abi.GroupLookupResponse", func(k string) error {
			switch k {
			case "name":
				return d.string(&v.Name)
			case "gid":
				return d.intField(&v.GID)
			}
			return d.skip()
		})
	case *abi.LookupResponse:
		err = d.object("abi.LookupResponse", func(k string) error {
			switch k {
			case "found":
				return d.bool(&v.Found)
			case "value":
				val, err := d.any()
				v.Value = val
				return err
			}
			return d.skip()
		})
	case *abi.Empty:
		err = d.object("abi.Empty", func(string) error { return d.skip() })
	case *any:
		*v, err = d.any()
	default:
		if v == nil {
			return errors.New("wire: cannot decode into nil")
		}
		return errors.New("wire: cannot decode into " + reflect.TypeOf(v).String())
	}
	return err
}

// setSlice stores a decoded array as encoding/json does: null gives nil, []
// an empty non-nil slice.
func setSlice[T any](dst *[]T, out []T, isNull bool) {
	switch {
	case isNull:
		*dst = nil
	case out == nil:
		*dst = []T{}
	default:
		*dst = out
	}
}

func (d *decoder) validateRequest(v *abi.ValidateRequest) error {
	return d.object("abi.ValidateRequest", func(k string) error {
		switch k {
		case "properties":
			return d.anyMap(&v.Properties)
		case "provider":
			return d.string(&v.Provider)
		}
		return d.skip()
	})
}

func (d *decoder) request(v *abi.Request) error {
	return d.object("abi.Request", func(k string) error {
		switch k {
		case "type":
			return d.string(&v.Type)
		case "name":
			return d.string(&v.Name)
		case "properties":
			return d.anyMap(&v.Properties)
		case "provider":
			return d.string(&v.Provider)
		case "noop":
			return d.bool(&v.Noop)
		case "health_check_only":
			return d.bool(&v.HealthCheckOnly)
		case "refresh":
			return d.bool(&v.Refresh)
		case "working_dir":
			return d.string(&v.WorkingDir)
		case "no_state":
			return d.bool(&v.NoState)
		case "diff":
			return d.bool(&v.Diff)
		case "hide_diff":
			return d.bool(&v.HideDiff)
		case "after_changes":
			return d.bool(&v.AfterChanges)
		}
		return d.skip()
	})
}
