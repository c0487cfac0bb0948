package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/natsctx"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
)

func newBundleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Pack, sign, verify and publish manifest bundles (docs/remote.md)",
		Long: `A bundle is a gzip tarball of a directory holding manifest.yaml, applied with
ccm apply https://.../bundle.tar.gz or ccm apply obj://BUCKET/KEY. Its
signature is a detached BUNDLE.sig file made with an nkeys seed.`,
		Example: `  ccm bundle keygen --out vendor.nk         # prints the public key to trust
  ccm bundle pack ./site --out site.tar.gz  # prints the sha256 to pin
  ccm bundle sign site.tar.gz --key vendor.nk
  ccm bundle verify site.tar.gz --trusted-keys trusted.keys
  ccm bundle publish site.tar.gz obj://VENDOR/site.tar.gz`,
	}
	cmd.AddCommand(newBundlePackCommand(), newBundleSignCommand(), newBundleVerifyCommand(), newBundlePublishCommand(), newBundleKeygenCommand())
	return cmd
}

func newBundlePackCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "pack DIR",
		Short: "Pack DIR (holding manifest.yaml) into a bundle; prints its sha256",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := bundle.Pack(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			if out == "" {
				out = strings.TrimSuffix(args[0], "/") + ".tar.gz"
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return &exitError{exitUsage, err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s sha256:%s\n", out, bundle.Digest(b))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "bundle `FILE` to write (default DIR.tar.gz)")
	return cmd
}

func newBundleSignCommand() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "sign BUNDLE --key SEEDFILE",
		Short: "Sign BUNDLE with an nkeys seed; writes BUNDLE.sig",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return &exitError{exitUsage, errors.New("--key SEEDFILE is required (ccm bundle keygen makes one)")}
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			seed, err := os.ReadFile(key)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			sig, err := bundle.Sign(b, seed)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			out := args[0] + bundle.SigSuffix
			if err := os.WriteFile(out, sig, 0o644); err != nil {
				return &exitError{exitUsage, err}
			}
			s, _ := bundle.ParseSignature(sig)
			fmt.Fprintf(cmd.OutOrStdout(), "%s signed by %s\n", out, s.Key)
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "`FILE` holding the nkeys seed to sign with")
	return cmd
}

func newBundleVerifyCommand() *cobra.Command {
	var pin, trusted, sigFile string
	cmd := &cobra.Command{
		Use:   "verify BUNDLE",
		Short: "Check BUNDLE's pin and signature, and that it extracts safely",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			var pol bundle.Policy
			if pin != "" {
				if pol.SHA256, err = bundle.ParsePin(pin); err != nil {
					return &exitError{exitUsage, err}
				}
			}
			if trusted != "" {
				if pol.Trusted, err = bundle.LoadTrusted(trusted); err != nil {
					return &exitError{exitUsage, err}
				}
				pol.RequireSignature = true
			}
			if sigFile == "" {
				sigFile = args[0] + bundle.SigSuffix
			}
			sig, err := os.ReadFile(sigFile)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return &exitError{exitUsage, err}
			}
			signer, err := pol.Check(b, sig)
			if err != nil {
				return &exitError{exitFailed, fmt.Errorf("bundle %s: %w", args[0], err)}
			}
			tmp, err := os.MkdirTemp("", "ccm-verify-")
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer os.RemoveAll(tmp)
			if _, err := bundle.Extract(b, tmp, bundle.DefaultLimits); err != nil {
				return &exitError{exitFailed, fmt.Errorf("bundle %s: %w", args[0], err)}
			}
			msg := "unsigned"
			if signer != "" {
				msg = "signed by " + signer
			} else if sig != nil {
				msg = "signature not checked (no --trusted-keys)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok, sha256:%s, %s\n", args[0], bundle.Digest(b), msg)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&pin, "sha256", "", "expected sha256 `HEX`")
	f.StringVar(&trusted, "trusted-keys", os.Getenv("CCM_TRUSTED_KEYS"), "`FILE` of trusted signer public keys; the bundle must be signed by one")
	f.StringVar(&sigFile, "signature", "", "signature `FILE` (default BUNDLE.sig)")
	return cmd
}

func newBundlePublishCommand() *cobra.Command {
	var natsContext string
	cmd := &cobra.Command{
		Use:   "publish BUNDLE obj://BUCKET/KEY",
		Short: "Put BUNDLE (and BUNDLE.sig when present) into a NATS object store",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := source.Parse(args[1])
			if err != nil || ref.Scheme != "obj" {
				return &exitError{exitUsage, fmt.Errorf("publish to obj://BUCKET/KEY, got %s", args[1])}
			}
			b, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			sig, err := os.ReadFile(args[0] + bundle.SigSuffix)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return &exitError{exitUsage, err}
			}
			c, err := natsctx.Resolve(natsContext)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			nc, js, err := c.Connect()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			defer nc.Close()
			ctx := cmd.Context()
			obj, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: ref.Bucket})
			if err != nil {
				return &exitError{exitUsage, fmt.Errorf("object store bucket %q: %w", ref.Bucket, err)}
			}
			if err := put(ctx, obj, ref.Key, b); err != nil {
				return err
			}
			if sig != nil {
				if err := put(ctx, obj, ref.Key+bundle.SigSuffix, sig); err != nil {
					return err
				}
			} else if err := obj.Delete(ctx, ref.Key+bundle.SigSuffix); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				// A stale signature must not sit beside a new bundle.
				return &exitError{exitUsage, fmt.Errorf("removing the old signature: %w", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "published %s sha256:%s (signed: %v)\n", ref, bundle.Digest(b), sig != nil)
			return nil
		},
	}
	cmd.Flags().StringVar(&natsContext, "context", "", "NATS context `NAME` or absolute path of a context file (default $NATS_CONTEXT, else CCM)")
	return cmd
}

func put(ctx context.Context, obj jetstream.ObjectStore, key string, b []byte) error {
	if _, err := obj.PutBytes(ctx, key, b); err != nil {
		return &exitError{exitUsage, fmt.Errorf("put %s: %w", key, err)}
	}
	return nil
}

func newBundleKeygenCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out SEEDFILE",
		Short: "Make an nkeys signing seed (mode 0600); prints its public key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return &exitError{exitUsage, errors.New("--out SEEDFILE is required")}
			}
			seed, pub, err := bundle.Keygen()
			if err != nil {
				return &exitError{exitUsage, err}
			}
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return &exitError{exitUsage, err}
			}
			_, err = f.Write(append(bytes.Clone(seed), '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return &exitError{exitUsage, err}
			}
			fmt.Fprintln(cmd.OutOrStdout(), pub)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "`FILE` to write the seed to (must not exist)")
	return cmd
}
