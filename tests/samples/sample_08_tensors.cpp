// Spec section 8 "Preparing inputs". Verbatim except:
//  * the fragments go into main() (after rt::AutoInit), each in its own block because they reuse
//    variable names (`Data` is a float16* in the first and a std::vector<float> in the second);
//  * "path/to/file" -> "input.bin", a 32x32 f32 file this program writes first into the working
//    directory (the test runs in a scratch folder; "tensor.bin" lands there too);
//  * `f16_tensor.release(); delete[] Data;` after the first fragment (the runtime never frees a
//    user buffer, so the caller must).
#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <vector>

namespace rt = optimium::runtime;

#define CHECK(Cond)                                                                                \
    do {                                                                                           \
        if (!(Cond)) {                                                                             \
            std::cerr << "FAIL: " #Cond " (line " << __LINE__ << ")" << std::endl;                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main() {
    rt::AutoInit Init;

    {
        // Create float32 tensor shaped 32x32.
        rt::TypedTensor<float> f32_tensor = rt::tensor<float>({32, 32});

        // Create generic tensor shaped 8.
        rt::Tensor i16_tensor = rt::tensor(rt::ElementType::I16, {8});

        // Create float16 tensor shaped 32x32 with a user-provided buffer.
        rt::float16 *Data = new rt::float16[32 * 32];
        rt::TypedTensor<rt::float16> f16_tensor = rt::tensor<rt::float16>({32, 32}, Data);

        // --- checks (not part of the spec sample) ---
        CHECK(f32_tensor.getType() == rt::ElementType::F32);
        CHECK(f32_tensor.getShape() == rt::TensorShape({32, 32}));
        CHECK(f32_tensor.getTensorSize() == 32 * 32 * sizeof(float));
        CHECK(f32_tensor.hasPadding() && !f32_tensor.isUserBuffer());
        CHECK(i16_tensor.getType() == rt::ElementType::I16 && i16_tensor.getElementCount() == 8);
        CHECK(f16_tensor.getType() == rt::ElementType::F16 && f16_tensor.isUserBuffer());
        CHECK(f16_tensor.data() == Data);
        f16_tensor.fill(rt::float16(0.5f));
        CHECK(static_cast<float>(Data[1023]) == 0.5f);
        f16_tensor.release();
        delete[] Data;
    }

    {
        // Write the file the spec reads from "path/to/file".
        {
            std::vector<float> Bytes(32 * 32, 2.0f);
            std::ofstream Out("input.bin", std::ios::out | std::ios::binary);
            Out.write(reinterpret_cast<const char *>(Bytes.data()),
                      static_cast<std::streamsize>(Bytes.size() * sizeof(float)));
        }

        // Load from existing data.
        std::vector<float> Data;
        rt::TypedTensor<float> Tensor = rt::tensor<float>({32, 32});
        std::copy(Data.begin(), Data.end(), Tensor.data());

        // Load from a file. <fstream> is required.
        std::ifstream File("input.bin", std::ios::in | std::ios::binary);
        File.read(reinterpret_cast<char *>(Tensor.data()), Tensor.getTensorSize());

        // Fill with a scalar. 'Tensor' must be a TypedTensor.
        Tensor.fill(1.0f);

        // Save / load tensor contents.
        Tensor.save("tensor.bin");
        Tensor.load("tensor.bin");

        // Copy into another tensor.
        rt::Tensor Other = rt::tensor(rt::ElementType::F32, {32, 32});
        rt::Tensor(Tensor).copyTo(Other);

        // Release tensor data explicitly.
        Tensor.release();

        // --- checks (not part of the spec sample) ---
        CHECK(File.gcount() == static_cast<std::streamsize>(32 * 32 * sizeof(float)));
        CHECK(!Tensor);
        rt::TypedTensor<float> Copy(Other);
        CHECK(std::all_of(Copy.begin(), Copy.end(), [](float V) { return V == 1.0f; }));
        std::ifstream Saved("tensor.bin", std::ios::in | std::ios::binary | std::ios::ate);
        CHECK(Saved && Saved.tellg() == static_cast<std::streamoff>(32 * 32 * sizeof(float)));
        // load() reads what save() wrote.
        rt::TypedTensor<float> Loaded = rt::tensor<float>({32, 32});
        Loaded.load("tensor.bin");
        CHECK(Loaded[0] == 1.0f && Loaded[1023] == 1.0f);
        // copyTo() rejects a shape or type mismatch.
        bool ShapeThrew = false, TypeThrew = false;
        try {
            Other.copyTo(rt::tensor(rt::ElementType::F32, {16, 16}));
        } catch (const rt::ShapeError &) {
            ShapeThrew = true;
        }
        try {
            Other.copyTo(rt::tensor(rt::ElementType::I32, {32, 32}));
        } catch (const rt::TypeError &) {
            TypeThrew = true;
        }
        CHECK(ShapeThrew && TypeThrew);
    }

    {
        rt::config::setPrintThreshold(10);  // max elements per rank; < 0 = unlimited
        rt::config::setPrintPrecision(4);   // decimal precision for floats

        // --- checks (not part of the spec sample) ---
        CHECK(rt::config::getPrintThreshold() == 10 && rt::config::getPrintPrecision() == 4);
        rt::TypedTensor<float> T = rt::tensor<float>({2, 20});
        for (size_t I = 0; I < T.getElementCount(); ++I)
            T[I] = static_cast<float>(I) / 3.0f;
        std::cout << rt::Tensor(T) << std::endl;
    }
    return 0;
}
