/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * The SSDT that `drivers` passes to QEMU on x86_64 (-acpitable): the LNUXBEEF device that
 * rust_driver_platform, rust_soc, rust_i2c_client and rust_debugfs match, with the _DSD of
 * samples/rust/rust_debugfs.rs. Without the samples' _CRS: they map no registers, and the
 * HPET owns the range the samples' documentation uses.
 */
DefinitionBlock ("", "SSDT", 2, "TEST", "VIRTACPI", 0x00000001)
{
    Scope (\_SB)
    {
        Device (T432)
        {
            Name (_HID, "LNUXBEEF")
            Name (_UID, 1)
            Name (_STA, 0x0F)
            Name (_DSD, Package () {
                ToUUID ("daffd814-6eba-4d8c-8a91-bc9bbf4aa301"),
                Package () {
                    Package (2) { "compatible", "sample-debugfs" }
                }
            })
        }
    }
}
