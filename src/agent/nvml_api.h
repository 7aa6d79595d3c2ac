// The subset of NVML's C ABI that allot calls, declared here so allot builds where no NVIDIA
// software is installed (../shared/reference/NVML-MIG.md §1–3; x86_64 layouts). The agent
// resolves these at run time with dlsym (agent/nvml.cc); the test fake (tests/fakes/fake_nvml.cc)
// exports them with C linkage. Names and values are NVML's own, so code reads like NVIDIA's docs.
//
// Only the VERSIONED symbols are looked up (§1): the unversioned ones the .so still exports
// behave differently (nvmlDeviceGetCount skips no-permission devices; the old
// ComputeRunningProcesses fills a 16-byte record).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
  NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

typedef enum nvmlEnableState_enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 } nvmlEnableState_t;
typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;
typedef enum nvmlMemoryErrorType_enum {
  NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
} nvmlMemoryErrorType_t;
typedef enum nvmlEccCounterType_enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 } nvmlEccCounterType_t;
typedef enum nvmlPageRetirementCause_enum {
  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
} nvmlPageRetirementCause_t;

// Opaque handles. MIG devices are nvmlDevice_t too.
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96  // MIG UUIDs need v2
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_VALUE_NOT_AVAILABLE (-1)
#define NVML_NVLINK_MAX_LINKS 36  // 13.x; older headers say 12 or 18, so probe from link 0

#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE 0x1

// GPU-instance profile *indices* (GetGpuInstanceProfileInfo's argument), not profile IDs.
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7  // +me
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8  // +me
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9  // double memory
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x12        // 13.x; walk until INVALID_ARGUMENT instead

#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE_NVL 0x8
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT 0x9
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0

#define nvmlEventTypeSingleBitEccError 0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002ULL
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
#define nvmlEventMigConfigChange 0x0000000000000100ULL

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device ID << 16 | vendor 0x10DE
  unsigned int pciSubSystemId;  // not filled for NVLink remotes
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "%08X:%02X:%02X.0"
} nvmlPciInfo_t;

// nvmlProcessInfo_t == nvmlProcessInfo_v2_t: the record of ComputeRunningProcesses _v2 and _v3.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when MIG is off
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

// One process's utilization over one sampling period (nvmlDeviceGetProcessUtilization).
typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned int smUtil;           // percent of the period the process ran kernels
  unsigned int memUtil;          // percent of the period the process read or wrote device memory
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct nvmlGpuInstancePlacement_st {
  unsigned int start;  // first memory slice
  unsigned int size;   // memory slices
} nvmlGpuInstancePlacement_t;

typedef struct nvmlComputeInstancePlacement_st {
  unsigned int start;  // first compute slice within the GPU instance
  unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
  unsigned int id;  // the profile ID that placement/create/list calls take
  unsigned int isP2pSupported;
  unsigned int sliceCount;  // compute slices; the memory footprint is placement.size
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlGpuInstanceInfo_st {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceInfo_st {
  nvmlDevice_t device;  // the parent GPU, not the MIG device
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid for XidCriticalError (999 = unknown Xid)
  unsigned int gpuInstanceId;    // 0xFFFFFFFF when not attributable
  unsigned int computeInstanceId;
} nvmlEventData_t;

}  // extern "C"

// The sizes and offsets the reference gives (§3, from compiling NVIDIA's header): a mismatch here
// would be a silent memory corruption at run time.
static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36 &&
              offsetof(nvmlPciInfo_t, pciDeviceId) == 28);
static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8 &&
              offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32 && offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8 && sizeof(nvmlComputeInstancePlacement_t) == 8);
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48 &&
              offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40);
static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24 && offsetof(nvmlGpuInstanceInfo_t, placement) == 16);
static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36);
static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32 && offsetof(nvmlComputeInstanceInfo_t, placement) == 24);
static_assert(sizeof(nvmlEventData_t) == 32 && offsetof(nvmlEventData_t, gpuInstanceId) == 24);

// The function types, one per symbol, so the loader and the fake cannot disagree on a signature.
namespace allot::nvml_api {

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using SystemGetDriverVersionFn = nvmlReturn_t (*)(char*, unsigned int);
using DeviceGetCountFn = nvmlReturn_t (*)(unsigned int*);
using DeviceGetHandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using DeviceGetStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);  // Name, UUID
using DeviceGetMemoryInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using DeviceGetPciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using DeviceGetUtilizationRatesFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using DeviceGetTemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*);
using DeviceGetUintFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // PowerUsage, ids, counts
using DeviceGetCudaComputeCapabilityFn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);  // major, minor
using DeviceGetTotalEccErrorsFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
                                                   unsigned long long*);
using DeviceGetRetiredPagesFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int*,
                                                 unsigned long long*);
using DeviceGetRemappedRowsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                                 unsigned int*);
using DeviceGetProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*);
// device, samples (nullptr: the size query), count in/out, lastSeenTimeStamp (µs; 0: all buffered).
using DeviceGetProcessUtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned int*,
                                                       unsigned long long);
using DeviceGetMigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using DeviceSetMigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlReturn_t*);
using DeviceGetMigDeviceHandleByIndexFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using DeviceGetGpuInstanceProfileInfoFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                           nvmlGpuInstanceProfileInfo_t*);
using DeviceGetGpuInstancePossiblePlacementsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                  nvmlGpuInstancePlacement_t*, unsigned int*);
using DeviceGetGpuInstanceRemainingCapacityFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
using DeviceCreateGpuInstanceWithPlacementFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                const nvmlGpuInstancePlacement_t*,
                                                                nvmlGpuInstance_t*);
using DeviceGetGpuInstancesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*, unsigned int*);
using GpuInstanceGetInfoFn = nvmlReturn_t (*)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*);
using GpuInstanceDestroyFn = nvmlReturn_t (*)(nvmlGpuInstance_t);
using GpuInstanceGetComputeInstanceProfileInfoFn = nvmlReturn_t (*)(nvmlGpuInstance_t, unsigned int, unsigned int,
                                                                    nvmlComputeInstanceProfileInfo_t*);
using GpuInstanceCreateComputeInstanceFn = nvmlReturn_t (*)(nvmlGpuInstance_t, unsigned int,
                                                            nvmlComputeInstance_t*);
using GpuInstanceGetComputeInstancesFn = nvmlReturn_t (*)(nvmlGpuInstance_t, unsigned int, nvmlComputeInstance_t*,
                                                          unsigned int*);
using ComputeInstanceGetInfoFn = nvmlReturn_t (*)(nvmlComputeInstance_t, nvmlComputeInstanceInfo_t*);
using ComputeInstanceDestroyFn = nvmlReturn_t (*)(nvmlComputeInstance_t);
using DeviceGetNvLinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
using DeviceGetNvLinkRemotePciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);
using EventSetCreateFn = nvmlReturn_t (*)(nvmlEventSet_t*);
using EventSetFreeFn = nvmlReturn_t (*)(nvmlEventSet_t);
using DeviceRegisterEventsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using EventSetWaitFn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);

}  // namespace allot::nvml_api
