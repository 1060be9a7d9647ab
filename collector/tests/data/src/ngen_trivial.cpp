// A kernel as nGEN (oneDNN's and oneMKL's generator) writes it: prologue and
// end of thread, packaged as nGEN packages every kernel.
#include "ngen_elf.hpp"
#include <cstdio>
#include <cstring>
using namespace ngen;

template <HW hw>
class Trivial : public ELFCodeGenerator<hw> {
    NGEN_FORWARD_ELF(hw)
public:
    explicit Trivial(Product p) : ELFCodeGenerator<hw>(p) {
        newArgument("x", ExternalArgumentType::GlobalPtr);
        externalName("ngen_trivial");
        requireSIMD(16);
        requireLocalID(1);
        finalizeInterface();
        prologue();
        epilogue();
    }
};

template <HW hw>
static int write(Product p, const char *path) {
    Trivial<hw> k(p);
    auto bin = k.getBinary();
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    fwrite(bin.data(), 1, bin.size(), f);
    fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    if (!strcmp(argv[1], "bmg")) return write<HW::Xe2>(Product(ProductFamily::BMG, 0, PlatformType::Unknown), argv[2]);
    if (!strcmp(argv[1], "pvc")) return write<HW::XeHPC>(Product(ProductFamily::PVC, 0, PlatformType::Unknown), argv[2]);
    if (!strcmp(argv[1], "mtl")) return write<HW::XeHPG>(Product(ProductFamily::MTL, 0, PlatformType::Unknown), argv[2]);
    return 2;
}
