/*
 * The device images register_images.cpp registers, in the program's own
 * image as a compiler-built program's are: SPIRV_FILE and NATIVE_FILE
 * (paths, given with -D) embedded in .rodata.
 */
#define STR2(x) #x
#define STR(x) STR2(x)

__asm__(".section .rodata\n"
        ".balign 16\n.global image_spirv\nimage_spirv:\n.incbin \"" STR(SPIRV_FILE) "\"\n"
        ".global image_spirv_end\nimage_spirv_end:\n"
        ".balign 16\n.global image_native\nimage_native:\n.incbin \"" STR(NATIVE_FILE) "\"\n"
        ".global image_native_end\nimage_native_end:\n"
        ".previous\n");
