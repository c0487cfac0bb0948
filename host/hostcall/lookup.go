package hostcall

import (
	"context"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// lookupCall answers ccm_lookup from the caller's facts, data and environ;
// always allowed (they are what the manifest's templates see anyway).
func lookupCall(_ context.Context, st *State, req abi.LookupRequest) (any, *abi.CallError) {
	if cerr := allowed(st, access{call: abi.CallLookup}); cerr != nil {
		return nil, cerr
	}
	if st.Caller.Lookup == nil {
		return abi.LookupResponse{}, nil
	}
	v, found := st.Caller.Lookup(req.Path)
	return abi.LookupResponse{Found: found, Value: v}, nil
}

// logCall passes a plugin's log line to the caller's log; always allowed.
func logCall(_ context.Context, st *State, req abi.LogRequest) (any, *abi.CallError) {
	switch req.Level {
	case "debug", "info", "warn", "error":
	default:
		return nil, invalid("log level %q is not one of debug, info, warn, error", req.Level)
	}
	if cerr := allowed(st, access{call: abi.CallLog}); cerr != nil {
		return nil, cerr
	}
	if st.Runtime != nil {
		st.Runtime.Log(req.Level, req.Message)
	}
	return abi.Empty{}, nil
}
