#!/bin/sh
# Prints this machine's VSIX target (linux-x64, darwin-arm64, win32-x64, …) for `make vsix`.
os=$(uname -s | tr 'A-Z' 'a-z')
case $os in mingw*|msys*|cygwin*) os=win32 ;; esac
m=$(uname -m)
case $m in x86_64|amd64) m=x64 ;; aarch64|arm64) m=arm64 ;; esac
echo "$os-$m"
