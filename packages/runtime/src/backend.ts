// The Backend contract (types only) lives in @kernelpack/ptx, the one package the runtime, the emulator and
// the webgpu backend all import (DESIGN.md, "Packages"); the runtime re-exports it for its users.
export type {
  MaybePromise, Dim3, BackendName, DeviceInfo, ImageToLoad, BackendFunction, BackendModule, ParamBlockLayout, PreparedLaunch,
  BackendStream, BackendEvent, LaunchConfig, KernelParams, Backend,
  CheckKind, CheckOptions, CheckSetting, SanitizerAccess, SanitizerAllocation, SanitizerReport,
} from '@kernelpack/ptx'
