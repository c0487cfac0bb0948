//go:build ccm_testhooks

package host

const testHooksBuilt = true
