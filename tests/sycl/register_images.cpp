// Registers two device images of kernels_a.cl's kernels with the real SYCL
// runtime the way a DPC++-built program does (its constructor calls
// __sycl_register_lib with the descriptor clang's offload wrapper makes):
// a native image ocloc built (target spir64_gen; for the devices of
// NATIVE_DEVICES) and SPIR-V (spir64). Then launches `scale` through the
// runtime (kernel_bundle, no lambda: any C++ compiler builds this) TIMES
// times. The images are embedded in the program's own image, as a
// compiler-built program's are, by register_images_data.c (built with the
// test's images, inside the root: its gcc). This file is C++ and the root
// has no g++: scripts/register-images.sh builds it on the host into
// register_images.o, kept in the repository, which the test links.
#include <sycl/sycl.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" const unsigned char image_spirv[], image_spirv_end[];
extern "C" const unsigned char image_native[], image_native_end[];

// The runtime's compiler.hpp: the offload entries and the descriptor of
// version 1; the image of version 3 (SYCL 2026, libsycl.so.9: no manifest).
struct offload_entry {
  void *addr;
  char *name;
  size_t size;
  int32_t flags;
  int32_t reserved;
};

struct device_binary {
  uint16_t Version;
  uint8_t Kind;
  uint8_t Format;
  const char *DeviceTargetSpec;
  const char *CompileOptions;
  const char *LinkOptions;
  const unsigned char *BinaryStart;
  const unsigned char *BinaryEnd;
  offload_entry *EntriesBegin;
  offload_entry *EntriesEnd;
  void *PropertySetsBegin;
  void *PropertySetsEnd;
};

struct device_binaries {
  uint16_t Version;
  uint16_t NumDeviceBinaries;
  device_binary *DeviceBinaries;
  offload_entry *HostEntriesBegin;
  offload_entry *HostEntriesEnd;
};

extern "C" void __sycl_register_lib(device_binaries *desc);
extern "C" void __sycl_unregister_lib(device_binaries *desc);

static char names[4][32] = {"scale", "scale_v2", "common_kernel",
                            "_ZTSZ4mainE10vector_add"};
static offload_entry entries[2][4];
static device_binary images[2];
static device_binaries desc = {1, 2, images, nullptr, nullptr};

__attribute__((constructor)) static void register_images() {
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++)
      entries[i][k] = {nullptr, names[k], 0, 0, 0};
  // Native first: the runtime prefers it where it fits the device.
  images[0] = {3, 4, 1, "spir64_gen", "", "",
               image_native, image_native_end, entries[0], entries[0] + 4,
               nullptr, nullptr};
  images[1] = {3, 4, 2, "spir64", "", "",
               image_spirv, image_spirv_end, entries[1], entries[1] + 4,
               nullptr, nullptr};
  __sycl_register_lib(&desc);
}

__attribute__((destructor)) static void unregister_images() {
  __sycl_unregister_lib(&desc);
}

int main(int argc, char **argv) {
  int times = argc > 1 ? atoi(argv[1]) : 1;
  sycl::queue q{sycl::gpu_selector_v};
  sycl::kernel_id id = [] {
    for (auto &k : sycl::get_kernel_ids())
      if (strcmp(k.get_name(), "scale") == 0)
        return k;
    fprintf(stderr, "no kernel scale registered\n");
    exit(2);
  }();
  auto bundle = sycl::get_kernel_bundle<sycl::bundle_state::executable>(
      q.get_context(), {q.get_device()}, {id});
  sycl::kernel k = bundle.get_kernel(id);
  float *x = sycl::malloc_device<float>(64, q);
  for (int i = 0; i < times; i++)
    q.submit([&](sycl::handler &h) {
       h.set_arg(0, x);
       h.parallel_for(sycl::range<1>(64), k);
     }).wait();
  sycl::free(x, q);
  printf("device %s\nlaunched scale %d\n",
         q.get_device().get_info<sycl::info::device::name>().c_str(), times);
  return 0;
}
