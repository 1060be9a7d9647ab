//.kernel heavy
//.platform DG2
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.options_string ""
//.full_options "-emitLocation -forceAssignRhysicalReg "" -enablePreemption -hasRNEandDenorm -noStitchExternFunc -useInlineData -crossThreadDataAlignment 32 -linker 0 -lscEnableImmOffsFor 196638 -TotalGRFNum 128 -abortOnSpill 4 -boundsChecking -presched-ctrl 22 -presched-rp 100 -nodpsendreorder -SBIDDepLoc -output -binary -dumpcommonisa -shaderDumpFilter "" -dumpvisa -printHexFloatInAsm -noverifyCISA -LSCBackupMode -waClearHDCWrite -cloneEvaluateSampleInst -insertRSDummyMov "
//.instCount 1667
//.RA type	GRAPH_COLORING_SPILL_FF_RA
//.spill size 2720
//.spill GRF est. ref count 219

// [xpu-asm test data: declarations and instructions trimmed]

per_thread_prolog:
(W)     mov (8|M0)               r127.0<1>:ud  0x0:ud                                                // 
(W)     and (1|M0)               r127.2<1>:ud  r0.0<0;1,0>:ud    0xFFFFFFC0:ud                       // 
(W)     and (1|M0)               r127.0<1>:uw  r0.4<0;1,0>:uw    0xFF:uw                             // 
(W)     add (1|M0)               r127.2<1>:ud  r127.2<0;1,0>:ud  0x40:uw              {I@2}          // 
(W)     mad (1|M0)               r127.2<1>:ud  r127.2<0;0>:ud    r127.0<0;0>:uw    0x60:uw              {I@1} // 
