//! What the `no_std` build of bridge.js needs from the crate itself: a
//! global allocator, and a panic handler that traps without formatting a
//! message (formatting alone would double the script's size).
//!
//! The allocator is a bump allocator that never frees, the smallest there
//! is. That suits this crate: it allocates when the bridge is made (the
//! shared state, one box per function handed to the browser) and when
//! wasm-bindgen's table of JS values grows (amortized doubling, so the
//! leftovers stay below the table's largest size); calls, replies, events
//! and measurements allocate nothing in Rust, as their state lives in JS.

#[cfg(all(not(feature = "std"), target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: lol_alloc::LockedAllocator<lol_alloc::LeakingAllocator> =
    lol_alloc::LockedAllocator::new(lol_alloc::LeakingAllocator::new());

#[cfg(all(not(feature = "std"), target_arch = "wasm32"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}
