//go:build !ccm_testhooks

package host

const testHooksBuilt = false
